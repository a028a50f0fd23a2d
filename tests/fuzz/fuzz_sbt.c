// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_sbt.c - the .sbt reader (gpubpf and TraceSmith flavours) on
 * arbitrary bytes: open, info, notes, stacks, iterate (graph node lists
 * split from detail), seek, iterate; every event through the library-op
 * label and kernels-by-op tables; its clock notes and pairs through
 * merge's alignment (as a second host's trace).
 */
// FUZZ_SRCS: src/sbt/sbt_read.c src/sbt/sbt_reader.c src/sbt/sbt_index.c src/sbt/sbt_codec.c src/sbt/sbt_schema.c src/sbt/sbt_quality.c src/sbt/sbt_tracesmith.c src/sbt/sbt_write.c src/sbt/sbt_merge.c src/core/util.c src/core/outfile.c src/core/event.c src/ioctl/ioctl.c src/ioctl/ioctl_names.c src/core/hmap.c src/core/json.c src/core/libop.c
// FUZZ_LIBS: -lzstd -lz -lstdc++
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sbt/sbt.h"
#include "sbt/sbt_merge.h"
#include "sbt/sbt_quality.h"

static void walk(struct sbt_reader *r, unsigned max)
{
	struct gb_event e;
	struct gb_opstats ops;
	struct gb_opstat **v;
	unsigned n = 0, k;
	volatile size_t sink = 0;
	char label[256];

	gb_opstats_init(&ops);
	while (n++ < max && sbt_reader_next(r, &e) == 1) {
		const struct gb_frame *f = sbt_reader_stack(r, e.stack_id, &k);

		/* fields of a hostile trace: any value for any type */
		sink += (size_t)gb_op_label(&e, label, sizeof(label));
		gb_opstats_add(&ops, &e);
		/* touch what the reader handed out: ASan checks it is alive */
		if (e.comm)
			sink += strlen(e.comm);
		if (e.name)
			sink += strlen(e.name);
		if (e.detail) {
			const char *pos = NULL;
			char node[64];	/* short: names longer than it are cut */

			sink += strlen(e.detail);
			/* a graph event's kernel nodes, split as export and info do */
			while (gb_graph_nodes_next(&e, &pos, node, sizeof(node)))
				sink += strlen(node);
		}
		while (f && k--)
			sink += f[k].sym ? strlen(f[k].sym) : f[k].line;
	}
	v = gb_opstats_sorted(&ops);
	for (k = 0; v && v[k]; k++)
		sink += strlen(v[k]->label) + v[k]->nkern;
	free(v);
	gb_opstats_free(&ops);
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct sbt_info *in;
	struct sbt_reader *r;
	char err[256];

	if (sbt_reader_open_mem(&r, data, size, err, sizeof(err)))
		return 0;
	in = sbt_reader_info(r);
	(void)sbt_reader_note(r, "k");
	(void)sbt_reader_last_error(r);
	walk(r, 1u << 20);
	{	/* what it lost, as every reader states it */
		struct sbt_quality q;
		char line[512];

		unsigned long long ns;
		const char *after;
		unsigned i;
		int pid;

		sbt_quality_get(r, &q);
		sbt_quality_line(&q, line, sizeof(line));
		for (i = 0; i < 4 && sbt_late_note(r, i, &pid, &ns, &after); i++)
			(void)strlen(after);
	}
	{	/* merged with itself as if from another host: any pairs, any clock notes */
		struct sbt_info other = *in;
		struct sbt_merge_trace t[2] = { { .path = "a", .r = r, .info = in },
						{ .path = "b", .r = r, .info = &other } };

		other.meta.boot_id[0] ^= 1;
		(void)sbt_merge_align(t, 2);
	}
	sbt_reader_seek(r, in->first_ts + (in->last_ts - in->first_ts) / 2);
	walk(r, 1000);
	sbt_reader_close(r);
	return 0;
}
