// The C face of RE2 (util/re.h). C++ only here: exceptions never cross into C (RE2
// reports errors through ok() and error(); allocation failure aborts, as xmalloc does).
#include <cstdio>
#include <cstring>
#include <new>
#include <re2/re2.h>

extern "C" {
#include "util/re.h"
}

struct re {
	RE2 *re2;
};

extern "C" struct re *re__compile(const char *pattern, char *err, size_t errlen)
{
	size_t len = std::strlen(pattern);

	if (len > RE_MAX_LEN) {
		std::snprintf(err, errlen, "regular expression of %zu bytes is longer than %d",
			      len, RE_MAX_LEN);
		return nullptr;
	}
	RE2::Options opt;
	opt.set_log_errors(false);
	opt.set_dot_nl(true);
	opt.set_max_mem(RE_MAX_MEM);
	RE2 *r = new RE2(re2::StringPiece(pattern, len), opt);
	if (!r->ok()) {
		// "pattern too large - compile failed" when it does not fit max_mem
		std::snprintf(err, errlen, "invalid regular expression '%.64s': %s", pattern,
			      r->error().c_str());
		delete r;
		return nullptr;
	}
	struct re *out = new struct re;
	out->re2 = r;
	return out;
}

extern "C" bool re__full_match(const struct re *re, const char *s)
{
	return RE2::FullMatch(re2::StringPiece(s, std::strlen(s)), *re->re2);
}

extern "C" void re__free(struct re *re)
{
	if (!re)
		return;
	delete re->re2;
	delete re;
}
