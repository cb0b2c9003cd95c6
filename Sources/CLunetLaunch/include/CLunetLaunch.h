// The lunet executable's start, before Swift's main (launch.c has what it does and why).
#ifndef CLUNET_LAUNCH_H
#define CLUNET_LAUNCH_H

/// Referenced from main.swift so the linker keeps this object (and its constructor).
int lunet_launch_linked(void);

#endif
