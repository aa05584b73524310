/* Unsafe string functions are compile errors in kiln (after git's banned.h).
 * Use snprintf, strbuf or memcpy with an explicit length instead. */
#ifndef KILN_BANNED_H
#define KILN_BANNED_H

/* Declare the real functions first, so that the macros below only catch our uses. */
#include <stdio.h>
#include <string.h>

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef gets
#define gets(x) BANNED(gets)

#endif
