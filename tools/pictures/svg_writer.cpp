#include "svg_writer.hpp"

#include <cstdio>
#include <stdexcept>

namespace warpforge::pictures {

std::string xml_escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string svg_number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string s = buffer;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

namespace {
std::string tag(const std::string& name, const Attributes& attributes) {
  std::string out = "<" + name;
  for (const auto& [key, value] : attributes) out += " " + key + "=\"" + xml_escape(value) + "\"";
  return out;
}
}  // namespace

SvgWriter::SvgWriter(double width, double height) : width_(width), height_(height) {
  empty("rect", {{"width", "100%"}, {"height", "100%"}, {"fill", "white"}});
}

void SvgWriter::open(const std::string& name, const Attributes& attributes) {
  body_ += std::string(2 * (open_.size() + 1), ' ') + tag(name, attributes) + ">\n";
  open_.push_back(name);
}

void SvgWriter::close() {
  if (open_.empty()) throw std::logic_error("SvgWriter::close: no element is open");
  body_ += std::string(2 * open_.size(), ' ') + "</" + open_.back() + ">\n";
  open_.pop_back();
}

void SvgWriter::empty(const std::string& name, const Attributes& attributes) {
  body_ += std::string(2 * (open_.size() + 1), ' ') + tag(name, attributes) + "/>\n";
}

void SvgWriter::text(const Attributes& attributes, const std::string& content) {
  body_ += std::string(2 * (open_.size() + 1), ' ') + tag("text", attributes) + ">" +
           xml_escape(content) + "</text>\n";
}

std::string SvgWriter::finish() {
  if (!open_.empty()) {
    throw std::logic_error("SvgWriter::finish: <" + open_.back() + "> is still open");
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         svg_number(width_) + "\" height=\"" + svg_number(height_) + "\" viewBox=\"0 0 " +
         svg_number(width_) + " " + svg_number(height_) +
         "\" font-family=\"DejaVu Sans Mono, monospace\">\n" + body_ + "</svg>\n";
}

}  // namespace warpforge::pictures
