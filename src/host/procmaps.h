/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* procmaps.h - /proc/PID/maps parsing */
#ifndef GB_PROCMAPS_H
#define GB_PROCMAPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

struct hmap;

struct gb_map {
	uint64_t start, end, offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool exec;
	char *path;		/* NULL for anonymous mappings */
	uint64_t t0, t1;	/* a timeline's: mapped at t0 (0: before we looked), unmapped at t1 */
};

/*
 * The file mappings of one process: a snapshot of /proc/PID/maps, or a
 * timeline built from the kernel's mapping events (procmaps_map ...):
 * v holds what is mapped now, sorted by address; old what was mapped
 * before and has been replaced (dlclose + dlopen, exec), each with the
 * time range it was valid. at_ns set: procmaps_find answers as of then.
 */
struct gb_maps {
	struct gb_map *v;
	unsigned n, cap;
	struct gb_map *old;
	unsigned nold, capold;
	uint64_t at_ns;		/* 0: now */
	/*
	 * gen: changes with every change of what the maps hold (unique across
	 * all maps of the process' life, never 0 once something was added);
	 * changed_ns: the latest time a mapping began or ended. At any at_ns
	 * >= changed_ns (or 0) procmaps_find answers as for now, so two
	 * lookups with the same gen under that condition give the same answers.
	 */
	uint64_t gen;
	uint64_t changed_ns;
};

/* Parse one maps line; returns 0 and fills m (path points into line, not copied) */
int procmaps_parse_line(char *line, struct gb_map *m);
/* Read /proc/PID/maps; only file-backed mappings kept. 0 or -errno */
int procmaps_read(pid_t pid, struct gb_maps *out);
/* Parse a whole maps text (for tests and fuzzing) */
int procmaps_parse(const char *text, size_t len, struct gb_maps *out);
/* path reaches the very file m maps (same device and inode: not a namesake, not a newer copy) */
bool procmaps_same_file(const char *path, const struct gb_map *m);
/*
 * A path to the file pid maps in m, checked by device and inode: through
 * the process's root (its mount namespace), its map_files link (deleted
 * files), else the host path (the process may be gone). 0 or -ENOENT.
 */
int procmaps_reach(pid_t pid, const struct gb_map *m, char *out, size_t len);
/*
 * The same file opened (read-only, close-on-exec) the same three ways, each
 * checked on the descriptor itself: a process that exits between a look
 * and an open (its root gone) falls through to the next way instead of
 * failing. A descriptor, or -ENOENT.
 */
int procmaps_open(pid_t pid, const struct gb_map *m);
/* The mapping that holds addr (as of at_ns when set), or NULL */
const struct gb_map *procmaps_find(const struct gb_maps *m, uint64_t addr);
void procmaps_free(struct gb_maps *m);

/* --- timelines --- */
/* nm (path copied) mapped at ts: what it overlaps ends at ts. 0 or -ENOMEM */
int procmaps_map(struct gb_maps *m, const struct gb_map *nm, uint64_t ts);
/* everything unmapped at ts (exec: a new address space) */
void procmaps_unmap_all(struct gb_maps *m, uint64_t ts);
/* what snap has where m has nothing mapped, as valid from the start (t0 0) */
int procmaps_merge(struct gb_maps *m, const struct gb_maps *snap);
/* a forked child: the parent's mappings at time at (0: now) */
int procmaps_copy(struct gb_maps *dst, const struct gb_maps *src, uint64_t at);
/* forget replaced mappings that ended before ts; at most keep the newest max */
void procmaps_prune(struct gb_maps *m, uint64_t ts, unsigned max);
/*
 * The container a process runs in. From the text of /proc/PID/cgroup: the
 * last 64-hex-digit id in a cgroup path (docker, containerd, CRI-O, podman
 * name their cgroups so), shortened to 12 digits as `docker ps` shows it;
 * 0 with out set, -ENOENT when there is none.
 */
int procmaps_container_id(const char *cgroup, size_t len, char *out, size_t outlen);
/*
 * Of a live process: its cgroup's container id, else "pidns-INODE" when its
 * pid namespace is not ours (unshare, chroot-style containers); 0 with out
 * set, -ENOENT for a process of the host, -errno when /proc cannot be read.
 */
int procmaps_container(pid_t pid, char *out, size_t outlen);
/*
 * The kernel's id of a live process's pid namespace (NS_GET_ID, Linux 6.18
 * on): unique for the host's uptime, where the namespace's inode number is
 * reused once the namespace is gone. 0 with *id set, -errno otherwise.
 */
int procmaps_pidns_id(pid_t pid, uint64_t *id);
/*
 * Tell apart pid namespaces that had one inode: KEY is "pidns-INODE"
 * (procmaps_container) of a namespace with kernel id ID; FIRST maps each
 * inode to the id of the first namespace seen with it (up to 4096 inodes).
 * The first keeps its key; a later one with the inode gets "pidns-INODE.ID"
 * (where KEYLEN has room). Other keys are left alone.
 */
void procmaps_pidns_unique(struct hmap *first, char *key, size_t keylen, uint64_t id);
/*
 * A process's place in a distributed job, from its environment (the text
 * of /proc/PID/environ: NUL-separated NAME=VALUE): the first launcher that
 * names a rank wins, torchrun (RANK, LOCAL_RANK, WORLD_SIZE), then Slurm
 * (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS), Open MPI
 * (OMPI_COMM_WORLD_RANK, ..._LOCAL_RANK, ..._SIZE), PMI (PMI_RANK,
 * PMI_SIZE); with SLURMD_NODENAME and SLURM_JOB_ID.SLURM_STEP_ID where set.
 * out: "rank=R size=N local=L node=NAME job=J.S from=torchrun" (the fields
 * known). 0 with out set, -ENOENT when no rank is named.
 */
int procmaps_rank_env(const char *environ, size_t len, char *out, size_t outlen);
/* the same, of a live process (-errno when /proc cannot be read) */
int procmaps_rank(pid_t pid, char *out, size_t outlen);
/*
 * The live descendants of pid (children of every thread, theirs, ...) from
 * /proc/PID/task/TID/children: appended to *out (grown, *n counted, the
 * caller frees). 0, or -ENOMEM.
 */
int procmaps_descendants(pid_t pid, pid_t **out, unsigned *n, unsigned *cap);
/*
 * A NUL-terminated string of a live process at addr (process_vm_readv, a
 * page at a time: a string near the end of a mapping reads), into out
 * (outlen >= 1, always terminated). Its length when the NUL was found,
 * -E2BIG when out filled first (out holds the start), -errno when the
 * memory could not be read (out holds what was).
 */
long procmaps_read_str(pid_t pid, uint64_t addr, char *out, size_t outlen);
/*
 * A string a BPF record holds cut at cutlen bytes (its reader's limit: the
 * record's buffer less its NUL), whose address in the process is addr: the
 * whole string read from the process into out, when it is still there and
 * starts as the cut one does. True: out holds it. False: the string was not
 * cut (shorter than cutlen), addr is 0, or the process no longer holds it
 * (then the caller keeps the cut one and counts it).
 */
#define PROCMAPS_STR_MAX	65536	/* the longest whole string asked for (C++ template names) */
bool procmaps_whole_str(pid_t pid, uint64_t addr, const char *cut, size_t cutlen, char *out,
			size_t outlen);
static inline bool procmaps_is_cut(const char *s, size_t cutlen)
{
	return strnlen(s, cutlen) >= cutlen;
}
/* The pids in a /proc/PID/task/TID/children text (space separated), appended. 0 or -ENOMEM */
int procmaps_parse_pids(const char *text, size_t len, pid_t **out, unsigned *n, unsigned *cap);
#endif
