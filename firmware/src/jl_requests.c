/* What the device does with a valid frame: the motion gate, NJOINT and every REQ
 * (docs/protocol.md sections 7-9; jointlab/hardware/emulator/device.py is the Python twin). */
#include "jl_board.h"
#include "jl_device.h"

#define MAX_TARGET 1e9f
#define MAX_GAIN 1e12f
#define LIMIT_SLACK 1e-6f

/* ------------------------------------------------------------------ handlers */
/* Motion gate: UNPOWERED, then DISARMED, then BRAKED (0 = allowed). */
static uint8_t gate(void)
{
    if (!jl_dev.powered)
        return JL_NACK_UNPOWERED;
    if (!jl_dev.armed)
        return JL_NACK_DISARMED;
    if (jl_dev.brakes && jl_dev.any_brakes)
        return JL_NACK_BRAKED;
    return 0;
}

void jl_cmd_njoint(const frame_t *f)
{
    int n = f->payload[0];
    if (n != jl_dev.p.dof) {
        jl_nack(f, JL_NACK_BAD_LENGTH, jl_dev.p.dof);
        return;
    }
    float v[5][JL_MAX_DOF];
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < n; i++)
            v[k][i] = get_f32(f->payload + 1 + 4 * (k * n + i));
    for (int i = 0; i < n; i++) {
        bool bad = !is_finite(v[0][i]);
        for (int k = 1; k < 5; k++) {
            float x = v[k][i];
            if (is_nan(x))
                continue;
            if (k == 2 || k == 3)
                bad |= !(x >= 0.0f && x <= MAX_GAIN);
            else
                bad |= !(x >= -MAX_TARGET && x <= MAX_TARGET);
        }
        if (bad) {
            jl_nack(f, JL_NACK_INVALID_VALUE, i);
            return;
        }
    }
    jl_action_t a;
    jl_resolve(v[0], v[1], v[2], v[3], v[4], &a);
    if (!a.zero) {
        uint8_t refused = gate();
        if (refused) {
            jl_nack(f, refused, -1);
            return;
        }
    }
    jl_dev.pending = a;
    jl_dev.has_pending = true;
    jl_dev.last_cmd_tick = jl_dev.tick;
    jl_dev.stats.commands_accepted++;
}

static void req_hello(const frame_t *f)
{
    jl_dev.armed = false;
    jl_dev.watchdog_engaged = false;
    jl_zero_drive();
    uint8_t *b = jl_echo(f);
    *b++ = JL_PROTOCOL_VERSION;
    *b++ = jl_dev.p.dof;
    b = put_u16(b, jl_dev.p.rate_hz);
    b = put_u16(b, jl_dev.watchdog_ms);
    b = put_u16(b, jl_dev.stream_period);
    memcpy(b, jl_dev.p.digest, 32);
    jl_send(JL_ACK, 16, 44, true);
}

static void req_geometry(const frame_t *f)
{
    uint8_t *b = jl_echo(f);
    *b++ = jl_dev.p.dof;
    for (int k = 0; k < 3; k++)
        b = put_f32(b, jl_dev.p.base_pos[k]);
    for (int k = 0; k < 3; k++)
        b = put_f32(b, jl_dev.p.base_orientation[k]);
    for (int i = 0; i < jl_dev.p.dof; i++) {
        *b++ = jl_dev.p.joint_type[i];
        b = put_f32(b, jl_dev.p.length[i]);
        for (int k = 0; k < 3; k++)
            b = put_f32(b, jl_dev.p.orientation[i][k]);
        for (int k = 0; k < 3; k++)
            b = put_f32(b, jl_dev.p.axis[i][k]);
        b = put_f32(b, jl_dev.p.lower[i]);
        b = put_f32(b, 0.5f * (jl_dev.p.lower[i] + jl_dev.p.upper[i]));
        b = put_f32(b, jl_dev.p.upper[i]);
        b = put_f32(b, jl_dev.p.home[i]);
        b = put_f32(b, jl_dev.config_speed[i]);
        *b++ = jl_dev.p.has_brakes[i];
    }
    jl_send(JL_ACK, 3, (uint16_t)(b - (jl_dev.body + JL_HEADER_SIZE)), false);
}

/* REQ SPEED / ACCEL: UNKNOWN_JOINT, INVALID_VALUE (NaN, inf), OUT_OF_LIMITS (<= 0, > limit). */
static void req_setting(const frame_t *f, float *config, const float *limit)
{
    int32_t joint = get_i32(f->payload);
    float value = get_f32(f->payload + 4);
    if (joint < 0 || joint >= jl_dev.p.dof) {
        jl_nack(f, JL_NACK_UNKNOWN_JOINT, joint);
        return;
    }
    if (!is_finite(value)) {
        jl_nack(f, JL_NACK_INVALID_VALUE, joint);
        return;
    }
    if (!(value > 0.0f && value <= limit[joint] * (1.0f + LIMIT_SLACK))) {
        jl_nack(f, JL_NACK_OUT_OF_LIMITS, joint);
        return;
    }
    config[joint] = value < limit[joint] ? value : limit[joint];
    jl_ack(f);
}

/* REQ SET_STATE (lockstep): put the joints at q moving at qd (clipped into the limits, a
 * slack of LIMIT_SLACK·max(1, |lower| + |upper|) refused beyond); the command becomes zero. */
static void req_set_state(const frame_t *f)
{
    int n = f->payload[0];
    if (n != jl_dev.p.dof) {
        jl_nack(f, JL_NACK_BAD_LENGTH, jl_dev.p.dof);
        return;
    }
    float q[JL_MAX_DOF], qd[JL_MAX_DOF];
    for (int i = 0; i < n; i++) {
        q[i] = get_f32(f->payload + 1 + 4 * i);
        qd[i] = get_f32(f->payload + 1 + 4 * (n + i));
        if (!is_finite(q[i]) || !is_finite(qd[i])) {
            jl_nack(f, JL_NACK_INVALID_VALUE, i);
            return;
        }
    }
    for (int i = 0; i < n; i++) {
        float lo = jl_dev.p.lower[i], hi = jl_dev.p.upper[i];
        float span = (lo < 0 ? -lo : lo) + (hi < 0 ? -hi : hi);
        span = LIMIT_SLACK * (span > 1.0f ? span : 1.0f);
        if (q[i] < lo - span || q[i] > hi + span) {
            jl_nack(f, JL_NACK_OUT_OF_LIMITS, i);
            return;
        }
        q[i] = q[i] < lo ? lo : (q[i] > hi ? hi : q[i]);
    }
    jl_board_set_state(q, qd);
    jl_zero_drive();
    jl_dev.watchdog_engaged = false;
    jl_dev.last_cmd_tick = jl_dev.tick;
    memcpy(jl_dev.qd_prev, qd, sizeof(float) * (size_t)n);
    jl_board_read_joints(jl_dev.q, jl_dev.qd);
    jl_ack(f);
}

void jl_handle_req(const frame_t *f)
{
    const uint8_t *p = f->payload;
    switch (f->type) {
    case 1: /* POWER */
        jl_dev.powered = p[0];
        if (!p[0]) {
            jl_dev.armed = false;
            jl_dev.watchdog_engaged = false;
            jl_zero_drive();
        }
        jl_board_set_power(p[0]);
        jl_board_set_brakes(jl_brakes_engaged()); /* unpowered: engaged where fitted */
        jl_ack(f);
        return;
    case 2: /* BRAKES */
        if (p[0] && !jl_dev.any_brakes) { /* no brakes to engage: the command in force stays */
            jl_nack(f, JL_NACK_UNSUPPORTED, -1);
            return;
        }
        if (!p[0] && !jl_dev.powered) {
            jl_nack(f, JL_NACK_UNPOWERED, -1);
            return;
        }
        jl_dev.brakes = p[0];
        if (p[0])
            jl_zero_drive();
        jl_board_set_brakes(jl_brakes_engaged());
        jl_ack(f);
        return;
    case 3:
        req_geometry(f);
        return;
    case 4:
        req_setting(f, jl_dev.config_speed, jl_dev.p.velocity_limit);
        return;
    case 5:
        req_setting(f, jl_dev.config_accel, jl_dev.p.accel_limit);
        return;
    case 16:
        req_hello(f);
        return;
    case 17: /* ARM: latch the present position (docs/firmware.md) */
        if (!jl_dev.powered) {
            jl_nack(f, JL_NACK_UNPOWERED, -1);
            return;
        }
        if (!jl_dev.armed) {
            jl_dev.has_pending = false;
            jl_hold_here(&jl_dev.base);
            jl_dev.armed = true;
        }
        jl_dev.last_cmd_tick = jl_dev.tick;
        jl_ack(f);
        return;
    case 18: /* DISARM */
        jl_dev.armed = false;
        jl_dev.watchdog_engaged = false;
        jl_zero_drive();
        jl_ack(f);
        return;
    case 19: /* STOP: hold now (IMMEDIATE) or ramp to rest, then hold (DECELERATE) */
        if (jl_dev.armed && !(jl_dev.brakes && jl_dev.any_brakes)) {
            jl_dev.has_pending = false;
            if (p[0] == 1)
                jl_start_decel();
            else
                jl_hold_here(&jl_dev.base);
        }
        jl_ack(f);
        return;
    case 20: /* HEARTBEAT: does not feed the watchdog */
        jl_ack(f);
        return;
    case 21:
        jl_dev.watchdog_ms = get_u16(p);
        jl_dev.watchdog_action = p[2];
        jl_ack(f);
        return;
    case 22: /* STREAM: a lockstep device never streams */
        if (jl_dev.lockstep) {
            jl_nack(f, JL_NACK_UNSUPPORTED, -1);
            return;
        }
        jl_dev.stream_period = get_u16(p);
        jl_ack(f);
        return;
    case 23: /* STEP (lockstep) */
        if (jl_dev.lockstep)
            jl_step(f, get_u64(p));
        else
            jl_nack(f, JL_NACK_UNSUPPORTED, -1);
        return;
    case 24: /* SET_STATE (lockstep) */
        if (jl_dev.lockstep)
            req_set_state(f);
        else
            jl_nack(f, JL_NACK_UNSUPPORTED, -1);
        return;
    default:
        jl_nack(f, JL_NACK_UNSUPPORTED, -1);
        return;
    }
}
