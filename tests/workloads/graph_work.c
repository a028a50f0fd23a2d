/*
 * graph_work - CUDA Graphs through a libcuda (fake): a capture of 3 kernel
 * launches on one stream (and one launch on another stream meanwhile, which
 * runs), the graph instantiated and launched 10 times; then a capture of 2
 * launches, the exec updated to that graph and launched 5 times; destroys.
 *
 *   graph_work [-l LIB] [-n GRAPH_LAUNCHES] [-H FILE]
 *
 * -H: after the work, stay until FILE exists (live views).
 *
 * Prints "produced captured=3 plain=N graph_launches=N nodes=3 updated_launches=5
 * updated_nodes=2 graph=G graph2=G2 exec=E ret_begin=R ... pid=P".
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fake_cuda.h"

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "graph_work: %s not found: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1", *hold = NULL;
	CUresult (*getfn)(CUfunction *, CUmodule, const char *);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);
	CUresult (*begin)(CUstream, int), (*end)(CUstream, CUgraph *);
	CUresult (*inst)(CUgraphExec *, CUgraph, unsigned long long);
	CUresult (*glaunch)(CUgraphExec, CUstream), (*update)(CUgraphExec, CUgraph, void *);
	CUresult (*gdestroy)(CUgraph), (*xdestroy)(CUgraphExec);
	CUstream s = (CUstream)0x5100, other = (CUstream)0x5200;
	const char *names[3] = { "graph_kern_a", "graph_kern_b", "graph_kern_c" };
	CUfunction f[3];
	CUgraph g = NULL, g2 = NULL;
	CUgraphExec e = NULL;
	int rb, re, ri, rl = 0, ru, rb2, re2, rd, rx, i, n = 10, c;
	void *h;

	while ((c = getopt(argc, argv, "l:n:H:")) != -1) {
		switch (c) {
		case 'H': hold = optarg; break;
		case 'l': lib = optarg; break;
		case 'n': n = atoi(optarg); break;
		default: return 2;
		}
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "graph_work: dlopen %s: %s\n", lib, dlerror());
		return 2;
	}
	getfn = sym(h, "cuModuleGetFunction");
	launch = sym(h, "cuLaunchKernel");
	begin = sym(h, "cuStreamBeginCapture_v2");
	end = sym(h, "cuStreamEndCapture");
	inst = sym(h, "cuGraphInstantiateWithFlags");
	glaunch = sym(h, "cuGraphLaunch");
	update = sym(h, "cuGraphExecUpdate_v2");
	gdestroy = sym(h, "cuGraphDestroy");
	xdestroy = sym(h, "cuGraphExecDestroy");
	for (i = 0; i < 3; i++)
		getfn(&f[i], NULL, names[i]);

	rb = begin(s, 0);
	for (i = 0; i < 3; i++) {
		launch(f[i], 8, 1, 1, 64, 1, 1, 0, s, NULL, NULL);
		if (i == 1)	/* another stream: not captured, it runs */
			launch(f[0], 2, 1, 1, 32, 1, 1, 0, other, NULL, NULL);
	}
	re = end(s, &g);
	ri = inst(&e, g, 0);
	for (i = 0; i < n; i++)
		rl |= glaunch(e, s);

	rb2 = begin(s, 0);
	launch(f[2], 8, 1, 1, 64, 1, 1, 0, s, NULL, NULL);
	launch(f[0], 8, 1, 1, 64, 1, 1, 0, s, NULL, NULL);
	re2 = end(s, &g2);
	ru = update(e, g2, NULL);
	for (i = 0; i < 5; i++)
		rl |= glaunch(e, s);
	rx = xdestroy(e);
	rd = gdestroy(g) | gdestroy(g2);
	printf("produced captured=3 captured2=2 plain=1 graph_launches=%d nodes=3 updated_launches=5 updated_nodes=2 "
	       "graph=%llu graph2=%llu exec=%llu ret_begin=%d ret_end=%d ret_inst=%d ret_launch=%d "
	       "ret_begin2=%d ret_end2=%d ret_update=%d ret_xdestroy=%d ret_destroy=%d pid=%d\n",
	       n, (unsigned long long)(uintptr_t)g, (unsigned long long)(uintptr_t)g2,
	       (unsigned long long)(uintptr_t)e, rb, re, ri, rl, rb2, re2, ru, rx, rd, getpid());
	fflush(stdout);
	while (hold && access(hold, F_OK))
		usleep(2000);
	return rb || re || ri || rl || rb2 || re2 || ru || rx || rd;
}
