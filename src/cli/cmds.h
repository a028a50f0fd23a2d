/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cmds.h - one function per subcommand; main.c dispatches */
#ifndef GB_CMDS_H
#define GB_CMDS_H

/* Each returns the process exit status. argv[0] is the subcommand name. */
int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_export(int argc, char **argv) __attribute__((weak));
int cmd_merge(int argc, char **argv) __attribute__((weak));
int cmd_symbolize(int argc, char **argv) __attribute__((weak));
int cmd_import(int argc, char **argv) __attribute__((weak));
int cmd_top(int argc, char **argv) __attribute__((weak));
int cmd_dump(int argc, char **argv) __attribute__((weak));
int cmd_report(int argc, char **argv) __attribute__((weak));
int cmd_steps(int argc, char **argv) __attribute__((weak));
int cmd_stuck(int argc, char **argv) __attribute__((weak));
int cmd_check(int argc, char **argv);

/* stack frames named by stacks/'s symbolizer, for the exporters (cmd_export.c) */
struct gb_export_names;
extern const struct gb_export_names gb_cli_names;

#endif
