#pragma once

// absl::CEscape, as TF prints strings (an Assert's data) and as Python's
// text_format writes a `checkpoint` file's paths (as_utf8=False): \n \r \t
// \" \' \\ named, any other byte outside 0x20..0x7e as three octal digits.

#include <string>
#include <string_view>

namespace eager {

std::string CEscape(std::string_view s);

}  // namespace eager
