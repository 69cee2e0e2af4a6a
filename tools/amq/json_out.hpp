// The CLI's JSON output: every JSON document amq writes is built as a
// nlohmann::ordered_json (members in the order they were added) and written by
// json_text, so it always parses: strings are escaped, and bytes that are not UTF-8
// (a Redis name, a key) are replaced by U+FFFD.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace amq::cli {

using Json = nlohmann::ordered_json;

// JSON text without a final newline: one line, or with indent >= 0 one member or
// element a line, indented by that many spaces a level.
std::string json_text(const Json& j, int indent = -1);

// A value given as text (SetInfo's params): a number when the text is one as amq
// prints numbers (decimal, %g), else the string.
Json json_number_or_string(std::string_view text);

}  // namespace amq::cli
