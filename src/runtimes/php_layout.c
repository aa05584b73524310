/* The Zend engine layouts and the decoding of what the PHP reader reads (php_layout.h). */
#include "runtimes/php_layout.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* x86-64 offsets per release line. Fields that never moved in 7.4-8.4: EG is 488 bytes
 * in front of current_execute_data; zend_execute_data starts opline (0), call,
 * return_value, func (24), This (zval: value 32, u1.type_info 40, u2), prev_execute_data
 * (48); zend_function.common starts type (0), arg_flags, fn_flags, function_name (8),
 * scope (16); zend_class_entry starts type, name (8); zend_string is gc (8), h (8), len
 * (16), val (24); zend_op has op1..result (24 bytes) then lineno (24). Only zend_op_array's
 * filename / line_start move, as common grew (8.0: attributes; 8.2: T and run_time_cache
 * into common; 8.3 gave some back; 8.4: prop_info, property hooks). */
struct version_row {
	int major, minor;
	uint16_t op_filename, op_line_start;
};

static const struct version_row rows[] = {
	{ 7, 4, 136, 144 },
	{ 8, 0, 144, 152 },
	{ 8, 1, 144, 152 },
	{ 8, 2, 152, 160 },
	{ 8, 3, 144, 152 },
	{ 8, 4, 168, 176 },
};

int php_layout__for_version(int major, int minor, struct php_layout *out)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].major != major || rows[i].minor != minor)
			continue;
		*out = (struct php_layout){
			.major = major, .minor = minor,
			.eg_current_execute_data = 488,
			.ed_opline = 0, .ed_func = 24, .ed_this_type_info = 40, .ed_prev = 48,
			.fn_type = 0, .fn_name = 8, .fn_scope = 16,
			.op_filename = rows[i].op_filename, .op_line_start = rows[i].op_line_start,
			.ce_name = 8,
			.str_len = 16, .str_val = 24,
			.op_lineno = 24,
		};
		return 0;
	}
	return -ENOTSUP;
}

/* Reads a decimal number of at most 3 digits at s[*i..len). */
static int number(const char *s, size_t len, size_t *i)
{
	int v = 0, digits = 0;

	while (*i < len && s[*i] >= '0' && s[*i] <= '9' && digits < 4) {
		v = v * 10 + (s[*i] - '0');
		(*i)++;
		digits++;
	}
	return digits && digits <= 3 ? v : -1;
}

int php_layout__parse_version(const char *s, size_t len, int *major, int *minor, char *ver,
			      size_t vlen)
{
	size_t i = 0, start;
	int a, b, c = -1;

	a = number(s, len, &i);
	if (a < 0 || i >= len || s[i++] != '.')
		return -EINVAL;
	b = number(s, len, &i);
	if (b < 0)
		return -EINVAL;
	if (i < len && s[i] == '.') {
		start = ++i;
		c = number(s, len, &i);
		if (c < 0)
			i = start - 1;
	}
	*major = a;
	*minor = b;
	if (c >= 0)
		snprintf(ver, vlen, "%d.%d.%d", a, b, c);
	else
		snprintf(ver, vlen, "%d.%d", a, b);
	return 0;
}

int php_layout__string(const struct php_layout *l, const uint8_t *buf, size_t len,
		       struct strbuf *out)
{
	int64_t n;

	if (len < (size_t)l->str_val || len < (size_t)l->str_len + 8)
		return -EINVAL;
	n = (int64_t)php_rd64(buf, l->str_len);
	if (n < 0 || n > (1 << 20))
		return -EINVAL;
	if ((uint64_t)n > len - l->str_val)
		n = (int64_t)(len - l->str_val);
	if (n > PHP_NAME_MAX)
		n = PHP_NAME_MAX;
	for (int64_t i = 0; i < n; i++) {
		uint8_t c = buf[l->str_val + (size_t)i];
		/* UTF-8 bytes pass; controls, ';' (the .col separator) and NUL do not */
		strbuf_addch(out, c < 0x20 || c == 0x7f || c == ';' ? '?' : (char)c);
	}
	return 0;
}

int php_layout__fn_print(const struct php_layout *l, const uint8_t *fn, size_t len,
			 struct php_fn_print *out)
{
	memset(out, 0, sizeof(*out));
	if (len < (size_t)l->fn_scope + 8)
		return -EINVAL;
	out->type = fn[l->fn_type];
	if (out->type != PHP_INTERNAL_FUNCTION && out->type != PHP_USER_FUNCTION &&
	    out->type != PHP_EVAL_CODE)
		return -EINVAL;
	out->name = php_rd64(fn, l->fn_name);
	out->scope = php_rd64(fn, l->fn_scope);
	if (out->type == PHP_INTERNAL_FUNCTION)
		return out->name ? 0 : -EINVAL;	/* every internal function has a name */
	if (len < (size_t)l->op_line_start + 8)
		return -EINVAL;
	out->file = php_rd64(fn, l->op_filename);
	out->line_start = php_rd32(fn, l->op_line_start);
	out->line_end = php_rd32(fn, l->op_line_start + 4);
	if (!out->file)
		return -EINVAL;
	if (out->line_end < out->line_start)	/* not set (a script's main code): open */
		out->line_end = UINT32_MAX;
	return 0;
}

uint32_t php_layout__line(const struct php_fn_print *f, bool have_lineno, uint32_t lineno)
{
	if (f->type == PHP_INTERNAL_FUNCTION)
		return 0;
	if (have_lineno && lineno && lineno >= f->line_start && lineno <= f->line_end)
		return lineno;
	return f->line_start;
}
