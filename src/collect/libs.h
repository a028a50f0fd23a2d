/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libs.h - find GPU libraries (and the dynamic loader) and attach the
 * uprobes to every distinct file: standard places, --lib, and whatever
 * live processes map (through /proc/PID/root for containers).
 */
#ifndef GB_LIBS_H
#define GB_LIBS_H
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct bpf_program;

enum gb_lib_kind {
	LIB_CUDA_DRV, LIB_CUDA_RT, LIB_HIP, LIB_HSA, LIB_LDSO,
	LIB_CUDA_RT_STATIC,	/* an executable or library with nvcc's static runtime inside */
	LIB_NCCL,		/* libnccl / librccl (collectives) */
	LIB_CUBLAS,		/* libcublas: GEMMs */
	LIB_CUBLASLT,		/* libcublasLt: matmuls */
	LIB_CUDNN,		/* libcudnn*: convolutions, graph execution */
	LIB_NVRTC,		/* libnvrtc: runtime compilation */
	LIB_NVJITLINK,		/* libnvJitLink: JIT linking */
	LIB__COUNT
};

struct libs_opts {
	struct bpf_program *entry;	/* gb_entry; NULL: find and inspect only, attach nothing (check) */
	struct bpf_program *ret;	/* gb_return */
	struct bpf_program *dl_state;	/* gb_dl_state; NULL: no loader hook (the side-band stream tells) */
	bool launch_rets;		/* return probes on launches too (a second trap each) */
	bool lean;			/* launches without a return probe: struct gb_lean_rec */
	struct bpf_program *sess;	/* gb_launch_session (prepared for session uprobes): launches
					 * without a return probe go to it, it samples their returns */
	bool multi;			/* entry/ret were prepared with umulti_prepare() */
	unsigned kinds;			/* bit mask of enum gb_lib_kind to trace */
	const pid_t *pids;		/* -p: links for these processes only (none: everyone) */
	unsigned npids;
};

struct gb_libs;

struct gb_libs *libs_new(const struct libs_opts *o);
/* Attach to one file given by the user; kind from its name. 0 or -errno */
int libs_add_path(struct gb_libs *l, const char *path, bool user_given);
/*
 * A file process pid maps (m: its path in pid's mount namespace, dev and
 * inode as the kernel reported them): a GPU library by name, or any file
 * with device code (a static CUDA runtime), attached once per inode.
 * Reached through /proc/PID/root or /proc/PID/map_files. 1 if attached now,
 * 2 if it is GPU code attached before, 0 if not GPU code (or not reachable).
 */
struct gb_map;
int libs_add_mapped(struct gb_libs *l, pid_t pid, const struct gb_map *m);
/* An executable about to run (-- CMD) or running (-p): its static runtime, if any */
int libs_add_exec(struct gb_libs *l, const char *path);
/* Files found with GPU code and not traced, one line each ("" if none) */
const char *libs_notes(const struct gb_libs *l);
/* The loader cache, standard directories, /usr/local/cuda*, $CUDA_HOME, /opt/rocm* */
void libs_scan_standard(struct gb_libs *l);
/* Files mapped by pid (new ones are attached). Returns how many new. */
int libs_scan_pid(struct gb_libs *l, pid_t pid);
void libs_scan_all_pids(struct gb_libs *l);
/*
 * -p --children: pid, a new descendant of the targets, becomes a target:
 * links on every attached file now (before it execs and maps one: its
 * first calls come right after its dlopen, sooner than the mapping's event
 * is read), and on files found later. 1 if added, 0 if links are for
 * everyone (or it is a target already), -ENOMEM. libs_drop_pid: it
 * exited, its links go.
 */
int libs_add_pid(struct gb_libs *l, pid_t pid);
void libs_drop_pid(struct gb_libs *l, pid_t pid);
/* How many GPU library files (not counting the loader) are attached */
unsigned libs_count(const struct gb_libs *l);
unsigned libs_probe_count(const struct gb_libs *l);
/* Where we looked, for the "nothing found" message */
const char *libs_searched(const struct gb_libs *l);
/* One line per attached file: kind, path, probes */
void libs_print(const struct gb_libs *l, FILE *f);
/* Detach everything */
void libs_free(struct gb_libs *l);

/* the library kinds --libs names: "cublas" (cuBLAS and cuBLASLt), "cudnn", "jit" */
#define LIB_MASK_OPLIBS	((1u << LIB_CUBLAS) | (1u << LIB_CUBLASLT) | (1u << LIB_CUDNN) | \
			 (1u << LIB_NVRTC) | (1u << LIB_NVJITLINK))
/* a --libs list to a mask of those kinds; -1 (and *bad the unknown name) if wrong */
long libs_parse_oplibs(const char *list, const char **bad);

/*
 * A file found with GPU code (find-only mode, entry NULL) and how its entry
 * points would be probed: after a leading endbr64 (which the kernel would
 * single-step), on a push %rbp (emulated), on another instruction the
 * kernel emulates (push, nop, jmp, call), or single-stepped out of line.
 */
struct libs_entry {
	const char *path;	/* as opened (under /proc/PID/root for another mount namespace) */
	const char *ns_path;	/* its path as the process that maps it sees it; NULL: found on disk */
	pid_t pid;		/* that process (0: found on disk) */
	const char *kind;	/* "libcuda", "static cudart", ... */
	bool static_rt;		/* device code and a static CUDA runtime inside an executable or library */
	unsigned funcs;		/* entry points found */
	unsigned endbr64, push_rbp, emulated, stepped;
};
void libs_foreach(const struct gb_libs *l, void (*fn)(void *ctx, const struct libs_entry *e), void *ctx);
/* How a function starting with these bytes is probed (libs_entry's counters): 0 push %rbp,
 * 1 other emulated, 2 single-stepped; *skip gets 4 for a leading endbr64, else 0 */
int libs_classify_entry(const unsigned char *b, size_t n, unsigned *skip);

/* Kind of a library from its file name, -1 if not one of ours */
int libs_kind_of(const char *path);
#endif
