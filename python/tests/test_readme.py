"""The README's Python section is true: each of its Python snippets runs,
in a fresh interpreter as a reader's would (the torch ones where torch is
installed, with a GPU where they use one; the JAX ones where JAX is installed)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

from conftest import have

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def snippets():
    text = README.read_text()
    section = text[text.index("\n## Python\n"):]
    section = section[:section.index("\n## ", 1)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_section_has_its_two_snippets():
    assert len(snippets()) == 2


@pytest.mark.parametrize("index", range(2))
def test_snippet_runs(index):
    code = snippets()[index]
    if "import torch" in code:
        if not have("torch"):
            pytest.skip("torch is not installed")
        import torch

        if "cuda" in code and not torch.cuda.is_available():
            pytest.skip("torch sees no CUDA GPU")
    if "import jax" in code and not have("jax"):
        pytest.skip("JAX is not installed")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert run.returncode == 0, f"README.md snippet {index} failed:\n{run.stdout}\n{run.stderr}"
