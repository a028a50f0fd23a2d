// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uprobe_floor LIB FUNC READYFILE [ret | PROG]: attach an empty uprobe to
 * FUNC in LIB (and an empty uretprobe with "ret"; or instead the program
 * PROG of bench_empty.bpf.c, one hot-path primitive), create READYFILE,
 * wait for SIGINT. The cost it adds per call is the floor any uprobe-based
 * tracer pays (for a call it also times).
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "bench_empty.skel.h"

static volatile sig_atomic_t stop;
static void on_sig(int s) { stop = s; }
static int on_rec(void *ctx, void *data, size_t n) { (void)ctx; (void)data; (void)n; return 0; }

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = argc > 2 ? argv[2] : "");
	struct bench_empty_bpf *skel;
	LIBBPF_OPTS(bpf_uprobe_opts, ro, .func_name = argc > 2 ? argv[2] : "", .retprobe = true);
	struct bpf_link *l, *rl = NULL;
	struct bpf_program *prog;
	struct ring_buffer *rb;
	struct btf *vmlinux;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: uprobe_floor LIB FUNC READYFILE [ret | PROG]\n");
		return 2;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	skel = bench_empty_bpf__open();
	if (!skel)
		return 1;
	vmlinux = btf__load_vmlinux_btf();
	if (libbpf_get_error(vmlinux) || btf__find_by_name_kind(vmlinux, "bpf_preempt_disable", BTF_KIND_FUNC) <= 0)
		bpf_program__set_autoload(skel->progs.prim_preempt, false);	/* before 6.10 */
	if (!libbpf_get_error(vmlinux))
		btf__free(vmlinux);
	if (bench_empty_bpf__load(skel))
		return 1;
	prog = skel->progs.bench_empty;
	if (argc == 5 && strcmp(argv[4], "ret") &&
	    !(prog = bpf_object__find_program_by_name(skel->obj, argv[4]))) {
		fprintf(stderr, "uprobe_floor: no program %s in bench_empty.bpf.c\n", argv[4]);
		return 2;
	}
	l = bpf_program__attach_uprobe_opts(prog, -1, argv[1], 0, &uo);
	if (!l) {
		perror("attach");
		return 1;
	}
	if (argc == 5 && !strcmp(argv[4], "ret")) {
		rl = bpf_program__attach_uprobe_opts(skel->progs.bench_empty_ret, -1, argv[1], 0, &ro);
		if (!rl) {
			perror("attach uretprobe");
			return 1;
		}
	}
	/* the ring primitives' records are read, as a recorder reads them */
	rb = ring_buffer__new(bpf_map__fd(skel->maps.prim_rb), on_rec, NULL, NULL);
	close(open(argv[3], O_CREAT | O_WRONLY, 0644));
	/*
	 * Consumed every 200 us, not polled: the records go without a wakeup,
	 * so an epoll wait would never return for them and the full ring would
	 * fail every reserve (which costs less than a record).
	 */
	while (!stop) {
		if (rb)
			ring_buffer__consume(rb);
		usleep(rb ? 200 : 100000);	/* not pause(): a signal just before it would be lost */
	}
	ring_buffer__free(rb);
	bpf_link__destroy(rl);
	bpf_link__destroy(l);
	bench_empty_bpf__destroy(skel);
	return 0;
}
