/* Internal to the core (src/): the device state and the functions its files share. */
#ifndef JL_DEVICE_H
#define JL_DEVICE_H

#include <string.h>

#include "jl_core.h"

#define RX_MAX_ENCODED (JL_RX_MAX_BODY + JL_RX_MAX_BODY / 254 + 1)
#define TX_MAX_ENCODED (JL_TX_MAX_BODY + JL_TX_MAX_BODY / 254 + 3)

typedef struct {
    uint8_t version, cls, type;
    uint16_t seq, length;
    const uint8_t *payload;
} frame_t;

typedef struct {
    jl_params_t p;
    jl_stats_t stats;
    /* receiver */
    uint8_t rx[RX_MAX_ENCODED];
    size_t rx_len;
    bool discarding;
    bool synced;
    bool have_expected;
    uint16_t expected;
    /* transmitter */
    uint8_t body[JL_TX_MAX_BODY];
    uint8_t tx[TX_MAX_ENCODED];
    uint16_t tx_seq;
    /* device state */
    uint64_t tick;
    uint64_t last_cmd_tick;
    bool powered, armed, brakes, any_brakes, watchdog_engaged;
    bool lockstep;        /* virtual time: ticks only on REQ STEP (protocol.md 10.5) */
    uint16_t watchdog_ms, stream_period;
    uint8_t watchdog_action;
    float config_speed[JL_MAX_DOF], config_accel[JL_MAX_DOF];
    jl_action_t base;     /* the command in force */
    jl_action_t pending;  /* accepted during this tick, in force from the next */
    bool has_pending;
    bool decel;           /* STOP DECELERATE: a ramp to rest is running */
    uint64_t decel_tick;  /* tick of the STOP */
    float decel_q0[JL_MAX_DOF], decel_v0[JL_MAX_DOF];
    float q[JL_MAX_DOF], qd[JL_MAX_DOF], qd_prev[JL_MAX_DOF], tau[JL_MAX_DOF];
    float tau_fb[JL_MAX_DOF]; /* the torque feedback read at the end of the last tick */
} jl_device_t;

/* The one device (no dynamic allocation). */
extern jl_device_t jl_dev;

/* Little-endian field access. */
static inline bool is_nan(float x) { return x != x; }
static inline bool is_finite(float x) { return (x - x) == 0.0f; }
static inline uint16_t get_u16(const uint8_t *b) { return (uint16_t)(b[0] | (b[1] << 8)); }
static inline int32_t get_i32(const uint8_t *b)
{
    uint32_t v = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
                 ((uint32_t)b[3] << 24);
    return (int32_t)v;
}
static inline float get_f32(const uint8_t *b)
{
    uint32_t v = (uint32_t)get_i32(b);
    float f;
    memcpy(&f, &v, 4);
    return f;
}
static inline uint64_t get_u64(const uint8_t *b)
{
    return (uint64_t)(uint32_t)get_i32(b) | ((uint64_t)(uint32_t)get_i32(b + 4) << 32);
}
static inline uint8_t *put_u16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    return b + 2;
}
static inline uint8_t *put_u32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return b + 4;
}
static inline uint8_t *put_f32(uint8_t *b, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    return put_u32(b, v);
}

/* The brakes as they are: requested (BRAKES 1, watchdog BRAKE) or motor power off. */
static inline bool jl_brakes_engaged(void)
{
    return jl_dev.brakes || (!jl_dev.powered && jl_dev.any_brakes);
}

/* jl_reply.c: replies (the payload is written at jl_dev.body + 7 first). */
void jl_send(uint8_t cls, uint8_t type, uint16_t length, bool hello_format);
uint8_t *jl_echo(const frame_t *f);
void jl_ack(const frame_t *f);
void jl_nack(const frame_t *f, uint8_t reason, int32_t detail);
/* jl_requests.c: a parsed, valid REQ or NJOINT. */
void jl_handle_req(const frame_t *f);
void jl_cmd_njoint(const frame_t *f);
/* jl_core.c: the command in force. */
void jl_set_zero(jl_action_t *a);
void jl_hold_here(jl_action_t *a);
void jl_zero_drive(void);
void jl_start_decel(void);
void jl_step(const frame_t *f, uint64_t until);

#endif
