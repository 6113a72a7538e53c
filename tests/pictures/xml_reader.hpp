// A strict reader for the XML the pictures write (SVG): the declaration,
// elements with double-quoted attributes, text and the five predefined
// entities. Anything else (a mismatched or unclosed tag, a duplicate or
// unquoted attribute, a stray '<' or '&', content after the root) throws
// std::runtime_error naming the offset, so a test that reads a picture
// back also checks that it is well-formed.
#pragma once

#include <cctype>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace warpforge::pictures::testing {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<XmlElement> children;
  std::string text;  // the element's own character data, entities decoded

  const std::string& attribute(const std::string& key) const {
    auto it = attributes.find(key);
    if (it == attributes.end()) throw std::runtime_error("<" + name + "> has no attribute " + key);
    return it->second;
  }
  // Every descendant (depth-first) named `element` whose class is `cls`
  // ("" for any class).
  void collect(const std::string& element, const std::string& cls,
               std::vector<const XmlElement*>& out) const {
    for (const XmlElement& c : children) {
      auto it = c.attributes.find("class");
      if (c.name == element && (cls.empty() || (it != c.attributes.end() && it->second == cls))) {
        out.push_back(&c);
      }
      c.collect(element, cls, out);
    }
  }
  std::vector<const XmlElement*> all(const std::string& element,
                                     const std::string& cls = "") const {
    std::vector<const XmlElement*> out;
    collect(element, cls, out);
    return out;
  }
};

class XmlReader {
 public:
  explicit XmlReader(const std::string& text) : s_(text) {}

  XmlElement document() {
    skip_space();
    if (s_.compare(pos_, 5, "<?xml") == 0) {
      const size_t end = s_.find("?>", pos_);
      if (end == std::string::npos) fail("an unclosed XML declaration");
      pos_ = end + 2;
    }
    skip_space();
    XmlElement root = element();
    skip_space();
    if (pos_ != s_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML at offset " + std::to_string(pos_) + ": " + what);
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  std::string name() {
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '-' || s_[pos_] == '_' || s_[pos_] == ':')) {
      ++pos_;
    }
    if (pos_ == start) fail("a name");
    return s_.substr(start, pos_ - start);
  }
  // Character data up to `stop`, with entities decoded.
  std::string chars(char stop) {
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != stop) {
      if (s_[pos_] == '<') fail("'<' inside character data");
      if (s_[pos_] != '&') {
        out += s_[pos_++];
        continue;
      }
      static const std::map<std::string, char> entities = {
          {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
      bool known = false;
      for (const auto& [entity, c] : entities) {
        if (s_.compare(pos_, entity.size(), entity) == 0) {
          out += c;
          pos_ += entity.size();
          known = true;
          break;
        }
      }
      if (!known) fail("an '&' that starts no predefined entity");
    }
    return out;
  }
  XmlElement element() {
    if (pos_ >= s_.size() || s_[pos_] != '<') fail("'<'");
    ++pos_;
    XmlElement e;
    e.name = name();
    for (;;) {
      skip_space();
      if (s_.compare(pos_, 2, "/>") == 0) {
        pos_ += 2;
        return e;
      }
      if (pos_ < s_.size() && s_[pos_] == '>') {
        ++pos_;
        break;
      }
      const std::string key = name();
      if (pos_ + 1 >= s_.size() || s_[pos_] != '=' || s_[pos_ + 1] != '"') {
        fail("=\" after attribute " + key);
      }
      pos_ += 2;
      std::string value = chars('"');
      if (pos_ >= s_.size()) fail("the end of attribute " + key);
      ++pos_;
      if (!e.attributes.emplace(key, value).second) fail("a second attribute " + key);
    }
    for (;;) {
      e.text += chars('<');
      if (pos_ >= s_.size()) fail("</" + e.name + ">");
      if (s_.compare(pos_, 2, "</") == 0) {
        pos_ += 2;
        if (name() != e.name) fail("</" + e.name + ">");
        skip_space();
        if (pos_ >= s_.size() || s_[pos_] != '>') fail("'>'");
        ++pos_;
        return e;
      }
      e.children.push_back(element());
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

inline XmlElement parse_xml(const std::string& text) {
  return XmlReader(text).document();
}

}  // namespace warpforge::pictures::testing
