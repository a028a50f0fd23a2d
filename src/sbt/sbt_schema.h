/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbt_schema.h - what the numbers in a trace's records mean. A record
 * stores its type, API, copy kind and provenance as small numbers; every
 * trace also carries the names behind them (notes "sbt.types", "sbt.apis",
 * "sbt.kinds", "sbt.prov", written once per file), and a reader maps the
 * file's numbers onto its own by name. So the order of GB_TYPES does not
 * matter to any trace, a name this build does not know is shown as such,
 * and traces from before the notes are read with the tables their builds
 * had (the frozen tables in sbt_schema.c), chosen by what their records say.
 */
#ifndef GB_SBT_SCHEMA_H
#define GB_SBT_SCHEMA_H
#include <stdbool.h>
#include <stdint.h>
#include "core/event.h"

/* a type table of the builds before "sbt.types": base[0..nbase) then tail */
struct sbt_schema_v0 {
	const char *label;
	const char *const *base;
	unsigned nbase;
	const char *const *tail;
	unsigned ntail;
};
extern const struct sbt_schema_v0 sbt_schema_v0[];
extern const unsigned sbt_schema_v0_n;

struct sbt_schema {
	bool remap;		/* false: the file's numbers are this build's */
	uint32_t ntype;
	uint16_t *type;		/* file type -> ours */
	char **unknown;		/* file type -> "unknown type 'x' (from a newer gpubpf)", or NULL */
	uint8_t api[256], kind[256], prov[256];
	char source[64];	/* "sbt.types", "v0 main", "v0 graphs", ... */
	char doubt[160];	/* v0: "" or another table that fits as well (sbt_schema_v0_best) */
};

/* the notes that name a trace's numbers */
#define NOTE_TYPES	"sbt.types"
#define NOTE_APIS	"sbt.apis"
#define NOTE_KINDS	"sbt.kinds"
#define NOTE_PROV	"sbt.prov"

#define SBT_SCHEMA_V0_MAX	8	/* old tables a trace can be matched against */

/* The i-th note naming this build's numbers: its key, and its value (free() it); NULL past the last */
char *sbt_schema_note(unsigned i, const char **key);
/*
 * The meaning of a file's numbers from its notes (types: "sbt.types" ...;
 * NULL for a trace from before them, which is read with table v0, NULL for
 * main's). 0 or -ENOMEM.
 */
int sbt_schema_init(struct sbt_schema *s, const char *types, const struct sbt_schema_v0 *v0,
		    const char *apis, const char *kinds, const char *prov);
/* For a trace without "sbt.types": per old table, the records its types
 * contradict (another API, fields such a call never has), and the type
 * numbers the trace holds (those below SBT_SCHEMA_SEEN) */
#define SBT_SCHEMA_SEEN	1024
struct sbt_schema_vote {
	uint64_t bad[SBT_SCHEMA_V0_MAX];
	uint8_t seen[SBT_SCHEMA_SEEN / 8];
};
void sbt_schema_v0_count(struct sbt_schema_vote *v, const struct gb_event *ev, uint32_t n);
/* the table that wrote it; doubt (len bytes): "" or why another might have
 * (GPUBPF_V0_TABLE=LABEL chooses one) */
const struct sbt_schema_v0 *sbt_schema_v0_best(const struct sbt_schema_vote *v, char *doubt, size_t len);
/* Map the static fields of n decoded events (a block's templates) */
void sbt_schema_apply(const struct sbt_schema *s, struct gb_event *ev, uint32_t n);
void sbt_schema_free(struct sbt_schema *s);
/* The name of v0 table t's row i, NULL past its end */
const char *sbt_schema_v0_name(const struct sbt_schema_v0 *t, unsigned i);
#endif
