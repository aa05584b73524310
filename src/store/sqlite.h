/* The SQLite backend (store/sqlite*.c): what it adds to the contract of store/store.h.
 *
 * Locations: "sqlite:PATH" is the database file PATH; a plain directory DIR is the
 * database DIR/kiln.db. Either is created when missing.
 *
 * Resolutions: sample rows are kept per 10 s bucket (STORE_RAW_STEP, the store's
 * resolution), and rolled up into hour and day rows once an hour (a day) has closed, so
 * that a week's query reads hour and day rows. store__series picks a step >= 10 s with at
 * most ~1500 points, at least an hour for ranges over 6 h and a day over 62 days, so that
 * long ranges read only rollups.
 *
 * Retention: store__retain deletes raw rows older than its cut-off, hour rows older than
 * 4x the raw horizon and day rows older than 16x (retention_days, 4x, 16x), then hands the
 * freed pages back to the file system.
 *
 * Durability: a put is one transaction, committed with journal_mode=WAL and
 * synchronous=FULL before store__put returns 0 (see store/sqlite.c).
 *
 * Threads: reads (select, select_tree, series, label_names, label_values, services) may
 * run in any number of threads at once, and alongside a put or retain: each read has a
 * read-only connection and a read transaction of its own (store/sqlite_read.c), so it
 * sees whole uploads, every put that returned before it started, and never blocks a put.
 * Writes (put, retain, stats) are the caller's to serialize, as the server does with its
 * mutex. Two processes must not open one database. */
#ifndef KILN_STORE_SQLITE_H
#define KILN_STORE_SQLITE_H

#include "store/store.h"

/* Resolutions of the stored rows, in seconds. */
#define STORE_RAW_STEP  10
#define STORE_HOUR_STEP 3600
#define STORE_DAY_STEP  86400

/* The backend's entry in store__open's table: scheme "sqlite", and plain directories. */
extern const struct store_backend sqlite_store_backend;

#endif
