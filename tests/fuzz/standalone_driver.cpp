// Runs a libFuzzer target (LLVMFuzzerTestOneInput) without libFuzzer, so that
// any compiler builds it and CI runs it: every file of the given corpus
// folders first (the seeds and the saved crash inputs, tests/fuzz/regressions),
// then random mutations of them for --seconds. Before each input runs it is
// written to --crash-file, so an input that crashes the process is left there
// to be added to tests/fuzz/regressions.
//
//   fuzz_parse [--seconds S] [--seed N] [--crash-file PATH] DIR...
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Input = std::string;

// Tokens of PTX that random byte changes rarely produce, spliced in whole.
const char* const kDictionary[] = {".reg",
                                   ".b32",
                                   ".u64",
                                   ".pred",
                                   "%r1",
                                   "%rd2",
                                   "%p1",
                                   "{",
                                   "}",
                                   ";",
                                   ",",
                                   "[",
                                   "]",
                                   "@%p1 ",
                                   "bra",
                                   "ret;",
                                   "mov.u32",
                                   "add.s32",
                                   "ld.global.u32",
                                   "st.shared.b32",
                                   "setp.lt.u32",
                                   "$L1:",
                                   ".entry k()",
                                   ".func",
                                   ".param .u64 p",
                                   "999999999999999999999999",
                                   "0x",
                                   "0f3F800000",
                                   "-",
                                   "+",
                                   "<",
                                   ">",
                                   "\n",
                                   ".version 8.4\n.target sm_90a\n.address_size 64\n"};

Input mutate(Input in, const std::vector<Input>& corpus, std::mt19937_64& rng) {
  const int changes = 1 + static_cast<int>(rng() % 4);
  for (int c = 0; c < changes; ++c) {
    const std::size_t at = in.empty() ? 0 : rng() % (in.size() + 1);
    switch (rng() % 6) {
      case 0:  // flip a bit
        if (!in.empty()) in[at % in.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // delete a run
        if (!in.empty()) in.erase(at % in.size(), 1 + rng() % 16);
        break;
      case 2:  // insert a random byte
        in.insert(in.begin() + static_cast<std::ptrdiff_t>(at), static_cast<char>(rng() % 256));
        break;
      case 3:  // insert a dictionary token
        in.insert(at, kDictionary[rng() % std::size(kDictionary)]);
        break;
      case 4: {  // splice a piece of another input
        const Input& other = corpus[rng() % corpus.size()];
        if (!other.empty()) {
          const std::size_t from = rng() % other.size();
          in.insert(at, other.substr(from, 1 + rng() % 64));
        }
        break;
      }
      default:  // duplicate a run
        if (!in.empty()) {
          const std::size_t from = at % in.size();
          in.insert(at, in.substr(from, 1 + rng() % 32));
        }
    }
  }
  if (in.size() > 65536) in.resize(65536);
  return in;
}

std::string crash_file;

void report_crash(int signal) {
  const char* text = "fuzz: the target crashed; the input is saved in the crash file\n";
  [[maybe_unused]] auto ignored = ::write(2, text, std::char_traits<char>::length(text));
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void run(const Input& input) {
  {
    std::ofstream out(crash_file, std::ios::binary | std::ios::trunc);
    out.write(input.data(), static_cast<std::streamsize>(input.size()));
  }
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
}

int usage() {
  std::fprintf(stderr,
               "usage: fuzz_<target> [--seconds S] [--seed N] [--crash-file PATH] DIR...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  std::uint64_t seed = std::random_device{}();
  crash_file = "fuzz-crash-input";
  std::vector<std::filesystem::path> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--seconds" || a == "--seed" || a == "--crash-file") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--crash-file") {
        crash_file = v;
        continue;
      }
      char* end = nullptr;
      if (a == "--seconds")
        seconds = std::strtod(v.c_str(), &end);
      else
        seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') return usage();
    } else if (!a.empty() && a[0] != '-') {
      dirs.emplace_back(a);
    } else {
      return usage();
    }
  }
  if (dirs.empty()) return usage();
  std::signal(SIGSEGV, report_crash);
  std::signal(SIGABRT, report_crash);
  std::signal(SIGILL, report_crash);
  std::signal(SIGFPE, report_crash);

  std::vector<Input> corpus;
  for (const auto& dir : dirs)
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      run(corpus.back());
    }
  if (corpus.empty()) {
    std::fprintf(stderr, "fuzz: no inputs in the corpus folders\n");
    return 2;
  }
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    run(mutate(corpus[rng() % corpus.size()], corpus, rng));
    ++runs;
  }
  std::filesystem::remove(crash_file);
  std::printf("fuzz: %zu corpus inputs and %llu mutations (seed %llu) ran without a crash\n",
              corpus.size(), static_cast<unsigned long long>(runs),
              static_cast<unsigned long long>(seed));
  return 0;
}
