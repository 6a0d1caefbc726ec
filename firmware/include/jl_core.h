/* Portable core of the JointLab reference firmware: protocol v2 device side.
 *
 * No dynamic allocation, no stdio; float (binary32) arithmetic, as on the wire. One static
 * device instance. The board (jl_board.h) calls:
 *   jl_init(&params)     once at start-up (sends the 0x00 of section 9);
 *   jl_receive(buf, n)   with the bytes received from the host, from its main loop;
 *   jl_tick()            once per tick of its 1 kHz timer.
 * Robot parameters come from a jl_params_t the board passes to jl_init: generated from a
 * JointLab robot description by firmware/tools/gen_robot.py (docs/firmware.md).
 */
#ifndef JL_CORE_H
#define JL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef JL_MAX_DOF
#define JL_MAX_DOF 16 /* bounds every buffer; a port sets it to its joint count */
#endif
#define JL_PROTOCOL_VERSION 2
#define JL_HEADER_SIZE 7
/* Largest frame body the device accepts: an NJOINT of JL_MAX_DOF joints. */
#define JL_RX_MAX_BODY (JL_HEADER_SIZE + 1 + 20 * JL_MAX_DOF + 4)
/* Largest frame body it sends: ACK GEOMETRY. */
#define JL_TX_MAX_BODY (JL_HEADER_SIZE + 29 + 50 * JL_MAX_DOF + 4)

enum { JL_CMD = 1, JL_REQ = 2, JL_DATA = 3, JL_ACK = 4, JL_NACK = 5 };
enum {
    JL_NACK_UNSPECIFIED = 0, JL_NACK_DISARMED = 1, JL_NACK_OUT_OF_LIMITS = 2,
    JL_NACK_UNKNOWN_JOINT = 3, JL_NACK_BRAKED = 4, JL_NACK_UNPOWERED = 5,
    JL_NACK_BAD_LENGTH = 6, JL_NACK_UNSUPPORTED = 7, JL_NACK_BUSY = 8,
    JL_NACK_INVALID_VALUE = 9, JL_NACK_VERSION_MISMATCH = 10,
};

/* Robot parameters (SI units), one entry per joint in the description's actuator order. */
typedef struct {
    uint8_t dof;                        /* 1 .. JL_MAX_DOF */
    uint16_t rate_hz;                   /* tick rate, Hz (1000) */
    float default_kp[JL_MAX_DOF];       /* N·m/rad (N/m): used where an NJOINT gain is NaN */
    float default_kd[JL_MAX_DOF];       /* N·m·s/rad (N·s/m) */
    float effort_limit[JL_MAX_DOF];     /* N·m (N): the law's clamp */
    float lower[JL_MAX_DOF];            /* joint limits, rad (m) */
    float upper[JL_MAX_DOF];
    float home[JL_MAX_DOF];
    float velocity_limit[JL_MAX_DOF];   /* rad/s: bound of REQ SPEED */
    float config_speed[JL_MAX_DOF];     /* rad/s: initial configured speed (0: the limit) */
    float accel_limit[JL_MAX_DOF];      /* rad/s²: bound of REQ ACCEL */
    float amps_per_torque[JL_MAX_DOF];  /* A per N·m: reported current */
    uint8_t joint_type[JL_MAX_DOF];     /* LINEAR=1, ROTARY=2 */
    uint8_t has_brakes[JL_MAX_DOF];
    float length[JL_MAX_DOF];           /* geometry (ACK GEOMETRY), m */
    float orientation[JL_MAX_DOF][3];   /* rad */
    float axis[JL_MAX_DOF][3];
    float base_pos[3];
    float base_orientation[3];
    uint8_t digest[32];                 /* SHA-256 of the description (ACK HELLO) */
} jl_params_t;

/* Link counters (sections 2 and 5): every dropped or refused frame is counted here. */
typedef struct {
    uint32_t bytes_received;
    uint32_t frames;              /* good-CRC frames */
    uint32_t cobs_errors;
    uint32_t runts;
    uint32_t crc_errors;
    uint32_t overruns;            /* runs longer than JL_RX_MAX_BODY's encoding */
    uint32_t malformed;           /* good CRC, bad length or invalid payload */
    uint32_t unknown_types;
    uint32_t version_mismatches;
    uint32_t sequence_gaps;
    uint32_t frames_missed;
    uint32_t out_of_order;
    uint32_t commands_accepted;
    uint32_t commands_refused;    /* CMD frames answered with a NACK */
    uint32_t frames_sent;
} jl_stats_t;

/* The command in force, resolved: tau = ff + kp*(pos - q) + kd*(vel - qd) where pd. */
typedef struct {
    bool zero;                    /* zero torque, PD off everywhere */
    uint8_t pd[JL_MAX_DOF];
    float ff[JL_MAX_DOF], pos[JL_MAX_DOF], kp[JL_MAX_DOF], kd[JL_MAX_DOF], vel[JL_MAX_DOF];
} jl_action_t;

void jl_init(const jl_params_t *params);
void jl_receive(const uint8_t *data, size_t n);
void jl_tick(void);
/* Lockstep (virtual time, protocol.md section 10.5), set by the board after jl_init: no
 * stream, ticks only on REQ STEP (at most JL_MAX_STEP_TICKS per request), REQ SET_STATE
 * through jl_board_set_state. A real-time board never calls it. */
void jl_set_lockstep(bool on);
#define JL_MAX_STEP_TICKS 60000

/* Inspection (tests, a debug console). */
const jl_stats_t *jl_stats(void);
uint64_t jl_tick_count(void);
bool jl_armed(void);
bool jl_powered(void);
bool jl_brakes(void);
bool jl_watchdog_engaged(void);
const float *jl_last_torque(void);
const jl_action_t *jl_action(void);
/* The NJointAction law alone, on one resolved action (exported for tests and timing). */
void jl_law(const jl_action_t *a, const float *q, const float *qd, float *tau);
/* Resolve a decoded NJOINT's five float vectors (NaN rules of section 7.1) into *out. */
void jl_resolve(const float *torque, const float *position, const float *kp,
                const float *kd, const float *velocity, jl_action_t *out);

#endif
