// Test support: a strict XML 1.0 well-formedness check and the JUnit structure CI systems read,
// for the tests of `check --junit` and `merge --junit` (there is no XML library among the
// dependencies, and the file must not be judged by the code that wrote it).
//
// parse_xml accepts a subset of XML 1.0 that is enough for any JUnit file and rejects what is not
// well-formed in it: one root element after an optional declaration, matching end tags, quoted
// attributes without '<' and without duplicates, '&' only as a predefined entity or a character
// reference to an allowed character, no "]]>" in text, valid UTF-8, no control characters but tab,
// line feed and carriage return. Comments are skipped; DOCTYPE, CDATA and processing instructions
// past the declaration are refused (the writer never emits them).
//
// check_junit then checks the structure of Jenkins' JUnit schema that GitHub, GitLab and Jenkins
// read: <testsuites> holding <testsuite name tests failures errors skipped> elements, each an
// optional <properties> of <property name value/> and then <testcase classname name> elements
// with at most one <failure>, <error> or <skipped> carrying a message, and an optional
// <system-out>; every count attribute equals the count of its children.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lockstep::cli::junit_check {

struct Node {
  std::string name;
  std::map<std::string, std::string> attrs;  // values with references resolved
  std::vector<Node> children;
  std::string text;  // character data directly inside, references resolved

  const Node* child(const std::string& n) const {
    for (const Node& c : children) {
      if (c.name == n) return &c;
    }
    return nullptr;
  }
  std::string attr(const std::string& n) const {
    auto it = attrs.find(n);
    return it == attrs.end() ? std::string() : it->second;
  }
};

namespace detail {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  std::string document(Node* root) {
    if (std::string e = check_chars(); !e.empty()) return e;
    if (s_.compare(0, 5, "<?xml") == 0) {
      const size_t end = s_.find("?>");
      if (end == std::string::npos) return fail("unterminated XML declaration");
      i_ = end + 2;
    }
    if (std::string e = misc(); !e.empty()) return e;
    if (i_ >= s_.size() || s_[i_] != '<') return fail("no root element");
    if (std::string e = element(root, 0); !e.empty()) return e;
    if (std::string e = misc(); !e.empty()) return e;
    if (i_ != s_.size()) return fail("content after the root element");
    return "";
  }

 private:
  std::string fail(const std::string& what) const {
    return what + " at byte " + std::to_string(i_);
  }

  // Valid UTF-8 and only the characters XML 1.0 allows.
  std::string check_chars() {
    for (size_t k = 0; k < s_.size();) {
      const auto c = static_cast<unsigned char>(s_[k]);
      size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
      if (len == 0 || k + len > s_.size()) {
        i_ = k;
        return fail("invalid UTF-8");
      }
      for (size_t j = 1; j < len; ++j) {
        if ((static_cast<unsigned char>(s_[k + j]) >> 6) != 2) {
          i_ = k;
          return fail("invalid UTF-8");
        }
      }
      if (len == 1 && c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
        i_ = k;
        return fail("control character " + std::to_string(c) + " is not allowed in XML");
      }
      k += len;
    }
    return "";
  }

  static bool name_start(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':';
  }
  static bool name_char(char c) {
    return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
  }
  static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

  void skip_space() {
    while (i_ < s_.size() && space(s_[i_])) ++i_;
  }

  // Whitespace and comments between top-level items.
  std::string misc() {
    for (;;) {
      skip_space();
      if (s_.compare(i_, 4, "<!--") != 0) return "";
      if (std::string e = comment(); !e.empty()) return e;
    }
  }

  std::string comment() {
    const size_t end = s_.find("-->", i_ + 4);
    if (end == std::string::npos) return fail("unterminated comment");
    if (s_.substr(i_ + 4, end - i_ - 4).find("--") != std::string::npos) {
      return fail("'--' inside a comment");
    }
    i_ = end + 3;
    return "";
  }

  std::string name(std::string* out) {
    if (i_ >= s_.size() || !name_start(s_[i_])) return fail("a name was expected");
    const size_t start = i_;
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    *out = s_.substr(start, i_ - start);
    return "";
  }

  // A reference after '&': appends the character it stands for.
  std::string reference(std::string* out) {
    const size_t end = s_.find(';', i_);
    if (end == std::string::npos || end - i_ > 12) return fail("'&' that starts no reference");
    const std::string ref = s_.substr(i_ + 1, end - i_ - 1);
    static const std::map<std::string, std::string> kEntities = {
        {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
    if (auto it = kEntities.find(ref); it != kEntities.end()) {
      *out += it->second;
    } else if (ref.size() > 1 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string digits = ref.substr(hex ? 2 : 1);
      if (digits.empty() || digits.find_first_not_of(hex ? "0123456789abcdefABCDEF"
                                                         : "0123456789") != std::string::npos) {
        return fail("bad character reference &" + ref + ";");
      }
      const uint64_t cp = std::stoull(digits, nullptr, hex ? 16 : 10);
      const bool allowed = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                           (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
      if (!allowed) return fail("character reference &" + ref + "; names a forbidden character");
      *out += cp < 0x80 ? std::string(1, static_cast<char>(cp)) : std::string("?");
    } else {
      return fail("unknown entity &" + ref + ";");
    }
    i_ = end + 1;
    return "";
  }

  std::string attribute_value(std::string* out) {
    if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) return fail("unquoted attribute");
    const char quote = s_[i_++];
    for (; i_ < s_.size() && s_[i_] != quote;) {
      if (s_[i_] == '<') return fail("'<' in an attribute value");
      if (s_[i_] == '&') {
        if (std::string e = reference(out); !e.empty()) return e;
        continue;
      }
      *out += s_[i_++];
    }
    if (i_ >= s_.size()) return fail("unterminated attribute value");
    ++i_;
    return "";
  }

  std::string element(Node* node, int depth) {
    if (depth > 64) return fail("elements nested too deep");
    ++i_;  // '<'
    if (std::string e = name(&node->name); !e.empty()) return e;
    for (;;) {
      const size_t before = i_;
      skip_space();
      if (i_ >= s_.size()) return fail("unterminated start tag <" + node->name);
      if (s_.compare(i_, 2, "/>") == 0) {
        i_ += 2;
        return "";
      }
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      if (i_ == before) return fail("attributes must be separated by white space");
      std::string key, value;
      if (std::string e = name(&key); !e.empty()) return e;
      skip_space();
      if (i_ >= s_.size() || s_[i_] != '=') return fail("attribute " + key + " has no '='");
      ++i_;
      skip_space();
      if (std::string e = attribute_value(&value); !e.empty()) return e;
      if (!node->attrs.emplace(key, value).second) return fail("duplicate attribute " + key);
    }
    for (;;) {
      if (i_ >= s_.size()) return fail("element <" + node->name + "> is not closed");
      if (s_.compare(i_, 2, "</") == 0) {
        i_ += 2;
        std::string end;
        if (std::string e = name(&end); !e.empty()) return e;
        skip_space();
        if (end != node->name) return fail("</" + end + "> closes <" + node->name + ">");
        if (i_ >= s_.size() || s_[i_] != '>') return fail("unterminated end tag");
        ++i_;
        return "";
      }
      if (s_.compare(i_, 4, "<!--") == 0) {
        if (std::string e = comment(); !e.empty()) return e;
      } else if (s_[i_] == '<') {
        if (i_ + 1 < s_.size() && (s_[i_ + 1] == '!' || s_[i_ + 1] == '?')) {
          return fail("CDATA, DOCTYPE and processing instructions are not expected");
        }
        node->children.emplace_back();
        if (std::string e = element(&node->children.back(), depth + 1); !e.empty()) return e;
      } else if (s_[i_] == '&') {
        if (std::string e = reference(&node->text); !e.empty()) return e;
      } else {
        if (s_.compare(i_, 3, "]]>") == 0) return fail("']]>' in character data");
        node->text += s_[i_++];
      }
    }
  }

  const std::string& s_;
  size_t i_ = 0;
};

inline bool whole_number(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// Checks a <testsuites> or <testsuite>'s count attributes against `counts` (tests, failures,
// errors, skipped).
inline std::string check_counts(const Node& n, const uint64_t counts[4]) {
  static const char* kKeys[4] = {"tests", "failures", "errors", "skipped"};
  for (int k = 0; k < 4; ++k) {
    const std::string v = n.attr(kKeys[k]);
    if (!whole_number(v)) return "<" + n.name + "> " + kKeys[k] + "=\"" + v + "\" is not a count";
    if (std::stoull(v) != counts[k]) {
      return "<" + n.name + " name=\"" + n.attr("name") + "\"> says " + kKeys[k] + "=\"" + v +
             "\" but holds " + std::to_string(counts[k]);
    }
  }
  return "";
}

inline std::string check_testcase(const Node& tc, const std::string& suite, uint64_t counts[4]) {
  if (tc.name != "testcase") return "<testsuite " + suite + "> holds <" + tc.name + ">";
  if (tc.attr("name").empty()) return "a testcase of " + suite + " has no name";
  if (tc.attr("classname") != suite) {
    return "testcase " + tc.attr("name") + " has classname \"" + tc.attr("classname") +
           "\", not its suite's \"" + suite + "\"";
  }
  ++counts[0];
  int verdicts = 0;
  for (const Node& v : tc.children) {
    const int k = v.name == "failure" ? 1 : v.name == "error" ? 2 : v.name == "skipped" ? 3 : 0;
    if (k == 0 && v.name != "system-out") {
      return "testcase " + suite + " " + tc.attr("name") + " holds <" + v.name + ">";
    }
    if (k == 0) continue;
    ++verdicts;
    ++counts[k];
    if (!v.attrs.count("message")) {
      return "<" + v.name + "> of " + suite + " " + tc.attr("name") + " has no message";
    }
  }
  if (verdicts > 1) return "testcase " + suite + " " + tc.attr("name") + " has two verdicts";
  return "";
}

}  // namespace detail

// Parses `doc`; "" when it is well-formed (the subset above), otherwise the first problem.
inline std::string parse_xml(const std::string& doc, Node* root) {
  return detail::Parser(doc).document(root);
}

// "" when `root` has the JUnit structure above, otherwise the first problem.
inline std::string check_junit(const Node& root) {
  if (root.name != "testsuites") return "the root element is <" + root.name + ">, not <testsuites>";
  uint64_t total[4] = {0, 0, 0, 0};
  for (const Node& suite : root.children) {
    if (suite.name != "testsuite") return "<testsuites> holds <" + suite.name + ">";
    const std::string name = suite.attr("name");
    if (name.empty()) return "a <testsuite> has no name";
    uint64_t counts[4] = {0, 0, 0, 0};
    for (size_t k = 0; k < suite.children.size(); ++k) {
      const Node& c = suite.children[k];
      if (c.name == "properties" && k == 0) {
        for (const Node& p : c.children) {
          if (p.name != "property" || !p.attrs.count("name") || !p.attrs.count("value")) {
            return "<properties> of " + name + " holds something else than <property name value>";
          }
        }
        continue;
      }
      if (std::string e = detail::check_testcase(c, name, counts); !e.empty()) return e;
    }
    if (std::string e = detail::check_counts(suite, counts); !e.empty()) return e;
    for (int k = 0; k < 4; ++k) total[k] += counts[k];
  }
  return detail::check_counts(root, total);
}

// Both: "" for a well-formed JUnit document.
inline std::string validate_junit(const std::string& doc, Node* root) {
  if (std::string e = parse_xml(doc, root); !e.empty()) return "not well-formed XML: " + e;
  return check_junit(*root);
}

}  // namespace lockstep::cli::junit_check
