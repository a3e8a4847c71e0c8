# json.awk flattens one JSON document into lines "PATH<TAB>VALUE", one per
# scalar and per empty object or array, in document order, so that POSIX sh
# hooks can read binding contexts and values without jq:
#
#   {"a":{"b":[1,"x"]},"c":{}}   gives   .a.b[0]	1
#                                        .a.b[1]	"x"
#                                        .c	{}
#
# PATH is ".key" for an object member and "[i]" for an array item, from the
# root; the root scalar's path is empty. VALUE is the JSON text as written:
# strings keep their quotes and escapes, so a hook can copy a value into the
# JSON it writes without escaping it again. Keys are not unescaped and may
# hold dots; look up only keys you know. Malformed input exits with status 1
# and a message naming the byte offset.
#
# Usage: awk -f json.awk FILE
# Portable: POSIX awk (mawk, gawk, busybox awk); no extensions.

{ src = src $0 "\n" }

END {
	n = length(src)
	pos = 1
	if (!failed) value("")
	if (!failed) {
		skipws()
		if (pos <= n) fail("trailing data")
	}
	if (failed) exit 1
}

function fail(msg) {
	if (!failed) printf "json.awk: %s at byte %d\n", msg, pos > "/dev/stderr"
	failed = 1
	pos = n + 1
}

function skipws(   c) {
	while (pos <= n) {
		c = substr(src, pos, 1)
		if (c != " " && c != "\t" && c != "\n" && c != "\r") return
		pos++
	}
}

# jstring reads a string at pos (its opening quote) and returns its text,
# quotes included.
function jstring(   start, c) {
	start = pos
	pos++
	while (pos <= n) {
		c = substr(src, pos, 1)
		if (c == "\\") {
			pos += 2
		} else if (c == "\"") {
			pos++
			return substr(src, start, pos - start)
		} else {
			pos++
		}
	}
	fail("unterminated string")
	return ""
}

function value(path,   c, key, i, start, tok) {
	skipws()
	if (pos > n) {
		fail("value expected")
		return
	}
	c = substr(src, pos, 1)
	if (c == "{") {
		pos++
		skipws()
		if (substr(src, pos, 1) == "}") {
			pos++
			print path "\t{}"
			return
		}
		for (;;) {
			skipws()
			if (substr(src, pos, 1) != "\"") {
				fail("object key expected")
				return
			}
			key = jstring()
			key = substr(key, 2, length(key) - 2)
			skipws()
			if (substr(src, pos, 1) != ":") {
				fail("':' expected")
				return
			}
			pos++
			value(path "." key)
			if (failed) return
			skipws()
			c = substr(src, pos, 1)
			pos++
			if (c == "}") return
			if (c != ",") {
				fail("',' or '}' expected")
				return
			}
		}
	}
	if (c == "[") {
		pos++
		skipws()
		if (substr(src, pos, 1) == "]") {
			pos++
			print path "\t[]"
			return
		}
		for (i = 0; ; i++) {
			value(path "[" i "]")
			if (failed) return
			skipws()
			c = substr(src, pos, 1)
			pos++
			if (c == "]") return
			if (c != ",") {
				fail("',' or ']' expected")
				return
			}
		}
	}
	if (c == "\"") {
		tok = jstring()
		if (!failed) print path "\t" tok
		return
	}
	start = pos
	while (pos <= n) {
		c = substr(src, pos, 1)
		if (c == "," || c == "}" || c == "]" || c == " " || c == "\t" || c == "\n" || c == "\r") break
		pos++
	}
	tok = substr(src, start, pos - start)
	if (tok !~ /^(true|false|null|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)$/) {
		pos = start
		fail("value expected")
		return
	}
	print path "\t" tok
}
