/* The monotonic clock in the forms the agent's background threads wait with: milliseconds
 * to compare, and the deadline a pthread_cond_timedwait() on a CLOCK_MONOTONIC condition
 * takes. */
#ifndef KILN_UTIL_CLOCK_H
#define KILN_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in milliseconds. */
uint64_t clock__now_ms(void);

/* Sleeps ms milliseconds (a signal may end it early). */
void clock__sleep_ms(int ms);

/* The CLOCK_MONOTONIC time ms milliseconds from now (ms >= 0). */
struct timespec clock__deadline(int ms);
/* The same on another clock: CLOCK_REALTIME for a condition with the default attributes. */
struct timespec clock__deadline_on(clockid_t clk, int ms);

#endif
