/* Board layer of the JointLab reference firmware: what the portable core calls.
 *
 * A port implements these functions for its board (docs/firmware.md): the host build
 * (firmware/host/host_board.c) and the QEMU mps2-an385 build (firmware/arm/board_mps2.c)
 * are two examples. The core never calls anything else outside itself (no malloc, no
 * stdio). Units are SI: rad or m, rad/s or m/s, N·m or N.
 */
#ifndef JL_BOARD_H
#define JL_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* UART (or USB CDC) transmit: queue n bytes for the host; must not drop bytes. */
void jl_board_uart_write(const uint8_t *data, size_t n);
/* Encoder inputs: measured position q[i] and velocity qd[i] of every joint, now. */
void jl_board_read_joints(float *q, float *qd);
/* Torque feedback: the torque (N·m, N) each motor produced during the last tick, from a
 * current sensor (current × torque constant); a board without one returns what it was
 * told to produce by jl_board_set_torque. Reported in DATA STATE (torque and current). */
void jl_board_read_torque(float *tau);
/* Motor outputs: the torque (N·m, N) each motor driver must produce until the next tick;
 * already clamped to the effort limits. */
void jl_board_set_torque(const float *tau);
/* Lockstep boards only (a simulated plant, jl_set_lockstep): put the joints at q moving
 * at qd at once (REQ SET_STATE). A real board never gets the call; an empty body will do. */
void jl_board_set_state(const float *q, const float *qd);
/* Motor power relay / driver enable. */
void jl_board_set_power(bool on);
/* Brakes (where present): true engages them. */
void jl_board_set_brakes(bool engaged);

/* The tick timer is the board's: it calls jl_tick() at rate_hz (1 kHz), and feeds the
 * received bytes to jl_receive() from its main loop (not from the UART interrupt). */

#endif
