/* Device side of protocol v2 (docs/protocol.md sections 2-10), portable C11.
 *
 * Mirrors jointlab/hardware/emulator/device.py: frames are checked (COBS, CRC, header,
 * payload) and dispatched; REQs are answered at once; accepted CMDs wait for the next
 * tick; the tick applies the command in force, checks the watchdog, drives the motors
 * with the NJointAction law and streams DATA STATE. Differences are listed in
 * docs/firmware.md ("What the reference firmware implements").
 */
#include "jl_board.h"
#include "jl_device.h"

jl_device_t jl_dev;

static void send_state(void)
{
    uint8_t *b = jl_dev.body + JL_HEADER_SIZE;
    uint64_t t = jl_dev.tick * 1000000u / jl_dev.p.rate_hz;
    put_u32(put_u32(b, (uint32_t)t), (uint32_t)(t >> 32));
    b[8] = jl_dev.p.dof;
    b[9] = jl_dev.powered;
    b[10] = jl_dev.armed;
    b[11] = jl_brakes_engaged();
    b[12] = jl_dev.watchdog_engaged;
    uint8_t *r = b + 13;
    float dt = 1.0f / (float)jl_dev.p.rate_hz;
    for (int i = 0; i < jl_dev.p.dof; i++) {
        r = put_f32(r, jl_dev.q[i]);
        r = put_f32(r, jl_dev.qd[i]);
        r = put_f32(r, (jl_dev.qd[i] - jl_dev.qd_prev[i]) / dt);
        r = put_f32(r, jl_dev.tau_fb[i] * jl_dev.p.amps_per_torque[i]);
        r = put_f32(r, jl_dev.tau_fb[i]);
        float speed = jl_dev.qd[i] < 0 ? -jl_dev.qd[i] : jl_dev.qd[i];
        *r++ = (jl_brakes_engaged() && jl_dev.p.has_brakes[i]) ? 4 : (speed > 1e-3f ? 2 : 1);
    }
    jl_send(JL_DATA, 1, (uint16_t)(r - b), false);
}

/* ------------------------------------------------------------------ the law */
void jl_resolve(const float *torque, const float *position, const float *kp,
                const float *kd, const float *velocity, jl_action_t *out)
{
    bool zero = true;
    for (int i = 0; i < jl_dev.p.dof; i++) {
        bool pd = !is_nan(position[i]);
        out->pd[i] = pd;
        out->ff[i] = torque[i];
        out->pos[i] = pd ? position[i] : 0.0f;
        out->kp[i] = pd ? (is_nan(kp[i]) ? jl_dev.p.default_kp[i] : kp[i]) : 0.0f;
        out->kd[i] = pd ? (is_nan(kd[i]) ? jl_dev.p.default_kd[i] : kd[i]) : 0.0f;
        out->vel[i] = (pd && !is_nan(velocity[i])) ? velocity[i] : 0.0f;
        if (pd || torque[i] != 0.0f)
            zero = false;
    }
    out->zero = zero;
}

void jl_law(const jl_action_t *a, const float *q, const float *qd, float *tau)
{
    for (int i = 0; i < jl_dev.p.dof; i++) {
        float t = a->ff[i];
        if (a->pd[i])
            t += a->kp[i] * (a->pos[i] - q[i]) + a->kd[i] * (a->vel[i] - qd[i]);
        float lim = jl_dev.p.effort_limit[i];
        tau[i] = a->zero ? 0.0f : (t > lim ? lim : (t < -lim ? -lim : t));
    }
}

void jl_set_zero(jl_action_t *a)
{
    memset(a, 0, sizeof *a);
    a->zero = true;
    jl_dev.decel = false;
}

/* Hold the measured position: PD with the default gains, zero torque and velocity. */
void jl_hold_here(jl_action_t *a)
{
    float q[JL_MAX_DOF], qd[JL_MAX_DOF];
    jl_board_read_joints(q, qd);
    jl_dev.decel = false;
    a->zero = false;
    for (int i = 0; i < jl_dev.p.dof; i++) {
        a->pd[i] = 1;
        a->ff[i] = 0.0f;
        a->pos[i] = q[i];
        a->kp[i] = jl_dev.p.default_kp[i];
        a->kd[i] = jl_dev.p.default_kd[i];
        a->vel[i] = 0.0f;
    }
}

void jl_zero_drive(void)
{
    jl_dev.has_pending = false;
    jl_set_zero(&jl_dev.base);
}

/* STOP DECELERATE: from the measured q0, v0, each joint's target decelerates at its
 * configured acceleration a to rest (v = v0 - sign(v0)·a·t, position its integral), then
 * holds where it came to rest; PD with the default gains, zero feed-forward. */
void jl_start_decel(void)
{
    jl_hold_here(&jl_dev.base);
    jl_board_read_joints(jl_dev.decel_q0, jl_dev.decel_v0);
    jl_dev.decel = true;
    jl_dev.decel_tick = jl_dev.tick;
}

static void decel_setpoints(void)
{
    float t = (float)(jl_dev.tick - jl_dev.decel_tick) / (float)jl_dev.p.rate_hz;
    bool moving = false;
    for (int i = 0; i < jl_dev.p.dof; i++) {
        float v0 = jl_dev.decel_v0[i], a = jl_dev.config_accel[i];
        float s = v0 < 0.0f ? -1.0f : 1.0f, stop = s * v0 / a;
        float tt = t < stop ? t : stop;
        jl_dev.base.vel[i] = t < stop ? v0 - s * a * t : 0.0f;
        jl_dev.base.pos[i] = jl_dev.decel_q0[i] + v0 * tt - 0.5f * s * a * tt * tt;
        moving |= t < stop;
    }
    jl_dev.decel = moving; /* at rest: the hold stays */
}


/* ------------------------------------------------------------------ tick */
void jl_tick(void)
{
    jl_dev.tick++;
    if (jl_dev.has_pending) {
        jl_dev.base = jl_dev.pending;
        jl_dev.has_pending = false;
        jl_dev.decel = false;
        jl_dev.watchdog_engaged = false;
    }
    float q[JL_MAX_DOF], qd[JL_MAX_DOF];
    jl_board_read_joints(q, qd);
    if (jl_dev.armed && jl_dev.watchdog_ms && !jl_dev.watchdog_engaged &&
        (jl_dev.tick - jl_dev.last_cmd_tick) * 1000u >
            (uint64_t)jl_dev.watchdog_ms * jl_dev.p.rate_hz) {
        jl_dev.watchdog_engaged = true;
        if (jl_dev.watchdog_action == 1) {
            jl_dev.brakes = true;
            jl_board_set_brakes(true);
            jl_set_zero(&jl_dev.base);
        } else {
            jl_hold_here(&jl_dev.base);
        }
    }
    if (jl_dev.decel)
        decel_setpoints();
    if (!jl_dev.powered || jl_dev.brakes || !jl_dev.armed)
        memset(jl_dev.tau, 0, sizeof jl_dev.tau);
    else
        jl_law(&jl_dev.base, q, qd, jl_dev.tau);
    jl_board_set_torque(jl_dev.tau);
    /* the encoders at the end of the tick, for DATA STATE (a processor-in-the-loop board
     * has stepped its plant in set_torque; on a real board this is a fresh reading) */
    memcpy(jl_dev.qd_prev, jl_dev.qd, sizeof jl_dev.qd);
    jl_board_read_joints(jl_dev.q, jl_dev.qd);
    jl_board_read_torque(jl_dev.tau_fb);
    if (jl_dev.stream_period && jl_dev.tick % jl_dev.stream_period == 0)
        send_state();
}

/* ------------------------------------------------------------------ start-up */
void jl_init(const jl_params_t *params)
{
    memset(&jl_dev, 0, sizeof jl_dev);
    jl_dev.p = *params;
    if (jl_dev.p.dof > JL_MAX_DOF)
        jl_dev.p.dof = JL_MAX_DOF;
    for (int i = 0; i < jl_dev.p.dof; i++) {
        float speed = jl_dev.p.config_speed[i];
        jl_dev.config_speed[i] = speed > 0 ? speed : jl_dev.p.velocity_limit[i];
        jl_dev.config_accel[i] = jl_dev.p.accel_limit[i];
        jl_dev.any_brakes |= jl_dev.p.has_brakes[i] != 0;
    }
    jl_dev.powered = true;
    jl_dev.watchdog_ms = 100;
    jl_dev.stream_period = 1;
    jl_set_zero(&jl_dev.base);
    jl_board_read_joints(jl_dev.q, jl_dev.qd);
    memcpy(jl_dev.qd_prev, jl_dev.qd, sizeof jl_dev.qd);
    jl_board_set_power(true);
    jl_board_set_brakes(false);
    jl_board_set_torque(jl_dev.tau);
    static const uint8_t zero = 0;
    jl_board_uart_write(&zero, 1);
}

void jl_set_lockstep(bool on)
{
    jl_dev.lockstep = on;
    jl_dev.stream_period = on ? 0 : 1;
}

/* REQ STEP (lockstep): run the ticks up to `until`, answer with the state after the last. */
void jl_step(const frame_t *f, uint64_t until)
{
    uint64_t ticks = until > jl_dev.tick ? until - jl_dev.tick : 0;
    if (ticks > JL_MAX_STEP_TICKS) {
        jl_nack(f, JL_NACK_OUT_OF_LIMITS, JL_MAX_STEP_TICKS);
        return;
    }
    for (uint64_t k = 0; k < ticks; k++)
        jl_tick();
    send_state();
}

const jl_stats_t *jl_stats(void) { return &jl_dev.stats; }
uint64_t jl_tick_count(void) { return jl_dev.tick; }
bool jl_armed(void) { return jl_dev.armed; }
bool jl_powered(void) { return jl_dev.powered; }
bool jl_brakes(void) { return jl_dev.brakes; }
bool jl_watchdog_engaged(void) { return jl_dev.watchdog_engaged; }
const float *jl_last_torque(void) { return jl_dev.tau; }
const jl_action_t *jl_action(void) { return &jl_dev.base; }
