// The lunet executable's start, before Swift's main (launch.c has what it does and why).
#ifndef CLUNET_LAUNCH_H
#define CLUNET_LAUNCH_H

/// Referenced from main.swift so the linker keeps this object (and its constructor).
int lunet_launch_linked(void);

/// The process's arguments as the constructor received them (argv, with their count). main.swift
/// reads them here rather than through Swift's `CommandLine`, whose code sits in the standard
/// library's one large text section: reaching it mapped 128 KB more of the executable.
char **lunet_launch_arguments(int *count);

#endif
