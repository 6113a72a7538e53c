// A small SVG writer: elements with attributes, escaped text, nothing more.
// The pictures (layout grids, benchmark plots) build their documents with it
// so that every attribute value and text node is escaped in one place.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace warpforge::pictures {

using Attributes = std::vector<std::pair<std::string, std::string>>;

// `value` with &, <, >, " and ' replaced by their XML entities.
std::string xml_escape(const std::string& value);
// A number as SVG wants it: fixed point, trailing zeros dropped ("12.5", "3").
std::string svg_number(double value);

class SvgWriter {
 public:
  // An <svg> of width x height user units (pixels) with a white background.
  SvgWriter(double width, double height);

  // <name attrs...> ... </name>: open() and close() nest groups.
  void open(const std::string& name, const Attributes& attributes);
  void close();
  // <name attrs.../>
  void empty(const std::string& name, const Attributes& attributes);
  // <text attrs...>content</text>
  void text(const Attributes& attributes, const std::string& content);
  // The finished document; throws std::logic_error while elements are open.
  std::string finish();

 private:
  std::string body_;
  std::vector<std::string> open_;
  double width_, height_;
};

}  // namespace warpforge::pictures
