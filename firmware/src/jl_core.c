/* Device side of protocol v2 (docs/protocol.md sections 2-10), portable C11.
 *
 * Mirrors jointlab/hardware/emulator/device.py: frames are checked (COBS, CRC, header,
 * payload) and dispatched; REQs are answered at once; accepted CMDs wait for the next
 * tick; the tick applies the command in force, checks the watchdog, drives the motors
 * with the NJointAction law and streams DATA STATE. Differences are listed in
 * docs/firmware.md ("What the reference firmware implements").
 */
#include "jl_core.h"

#include <string.h>

#include "jl_board.h"
#include "jl_wire.h"

#define RX_MAX_ENCODED (JL_RX_MAX_BODY + JL_RX_MAX_BODY / 254 + 1)
#define TX_MAX_ENCODED (JL_TX_MAX_BODY + JL_TX_MAX_BODY / 254 + 3)
#define MAX_TARGET 1e9f
#define MAX_GAIN 1e12f
#define LIMIT_SLACK 1e-6f

typedef struct {
    uint8_t version, cls, type;
    uint16_t seq, length;
    const uint8_t *payload;
} frame_t;

static struct {
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
    uint16_t watchdog_ms, stream_period;
    uint8_t watchdog_action;
    float config_speed[JL_MAX_DOF], config_accel[JL_MAX_DOF];
    jl_action_t base;     /* the command in force */
    jl_action_t pending;  /* accepted during this tick, in force from the next */
    bool has_pending;
    float q[JL_MAX_DOF], qd[JL_MAX_DOF], qd_prev[JL_MAX_DOF], tau[JL_MAX_DOF];
} d;

/* ------------------------------------------------------------------ little helpers */
static bool is_nan(float x) { return x != x; }
static bool is_finite(float x) { return (x - x) == 0.0f; }
static uint16_t get_u16(const uint8_t *b) { return (uint16_t)(b[0] | (b[1] << 8)); }
static int32_t get_i32(const uint8_t *b)
{
    uint32_t v = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
                 ((uint32_t)b[3] << 24);
    return (int32_t)v;
}
static float get_f32(const uint8_t *b)
{
    uint32_t v = (uint32_t)get_i32(b);
    float f;
    memcpy(&f, &v, 4);
    return f;
}
static uint8_t *put_u16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    return b + 2;
}
static uint8_t *put_u32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return b + 4;
}
static uint8_t *put_f32(uint8_t *b, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    return put_u32(b, v);
}

/* The brakes as they are: requested (BRAKES 1, watchdog BRAKE) or motor power off. */
static bool brakes_engaged(void) { return d.brakes || (!d.powered && d.any_brakes); }

/* ------------------------------------------------------------------ sending */
/* Send the frame whose payload was written at d.body + 7 (length bytes). */
static void send(uint8_t cls, uint8_t type, uint16_t length, bool hello_format)
{
    uint8_t *h = d.body;
    h[0] = hello_format ? 1 : JL_PROTOCOL_VERSION;
    h[1] = cls;
    h[2] = type;
    put_u16(h + 3, d.tx_seq++);
    put_u16(h + 5, length);
    size_t n = JL_HEADER_SIZE + length;
    if (hello_format) {
        uint16_t crc = jl_crc16(h, n);
        h[n++] = (uint8_t)(crc >> 8);
        h[n++] = (uint8_t)crc;
    } else {
        put_u32(h + n, jl_crc32(0, h, n));
        n += 4;
    }
    d.tx[0] = 0;
    size_t m = jl_cobs_encode(h, n, d.tx + 1);
    d.tx[m + 1] = 0;
    jl_board_uart_write(d.tx, m + 2);
    d.stats.frames_sent++;
}

static uint8_t *echo(const frame_t *f)
{
    uint8_t *b = d.body + JL_HEADER_SIZE;
    b[0] = f->cls;
    b[1] = f->type;
    return put_u16(b + 2, f->seq);
}

static void ack(const frame_t *f)
{
    echo(f);
    send(JL_ACK, 0, 4, false);
}

static void nack(const frame_t *f, uint8_t reason, int32_t detail)
{
    uint8_t *b = echo(f);
    b[0] = reason;
    put_u32(b + 1, (uint32_t)detail);
    send(JL_NACK, 0, 9, false);
    if (f->cls == JL_CMD)
        d.stats.commands_refused++;
}

static void send_state(void)
{
    uint8_t *b = d.body + JL_HEADER_SIZE;
    uint64_t t = d.tick * 1000000u / d.p.rate_hz;
    put_u32(put_u32(b, (uint32_t)t), (uint32_t)(t >> 32));
    b[8] = d.p.dof;
    b[9] = d.powered;
    b[10] = d.armed;
    b[11] = brakes_engaged();
    b[12] = d.watchdog_engaged;
    uint8_t *r = b + 13;
    float dt = 1.0f / (float)d.p.rate_hz;
    for (int i = 0; i < d.p.dof; i++) {
        r = put_f32(r, d.q[i]);
        r = put_f32(r, d.qd[i]);
        r = put_f32(r, (d.qd[i] - d.qd_prev[i]) / dt);
        r = put_f32(r, d.tau[i] * d.p.amps_per_torque[i]);
        r = put_f32(r, d.tau[i]);
        float speed = d.qd[i] < 0 ? -d.qd[i] : d.qd[i];
        *r++ = (brakes_engaged() && d.p.has_brakes[i]) ? 4 : (speed > 1e-3f ? 2 : 1);
    }
    send(JL_DATA, 1, (uint16_t)(r - b), false);
}

/* ------------------------------------------------------------------ the law */
void jl_resolve(const float *torque, const float *position, const float *kp,
                const float *kd, const float *velocity, jl_action_t *out)
{
    bool zero = true;
    for (int i = 0; i < d.p.dof; i++) {
        bool pd = !is_nan(position[i]);
        out->pd[i] = pd;
        out->ff[i] = torque[i];
        out->pos[i] = pd ? position[i] : 0.0f;
        out->kp[i] = pd ? (is_nan(kp[i]) ? d.p.default_kp[i] : kp[i]) : 0.0f;
        out->kd[i] = pd ? (is_nan(kd[i]) ? d.p.default_kd[i] : kd[i]) : 0.0f;
        out->vel[i] = (pd && !is_nan(velocity[i])) ? velocity[i] : 0.0f;
        if (pd || torque[i] != 0.0f)
            zero = false;
    }
    out->zero = zero;
}

void jl_law(const jl_action_t *a, const float *q, const float *qd, float *tau)
{
    for (int i = 0; i < d.p.dof; i++) {
        float t = a->ff[i];
        if (a->pd[i])
            t += a->kp[i] * (a->pos[i] - q[i]) + a->kd[i] * (a->vel[i] - qd[i]);
        float lim = d.p.effort_limit[i];
        tau[i] = a->zero ? 0.0f : (t > lim ? lim : (t < -lim ? -lim : t));
    }
}

static void set_zero(jl_action_t *a)
{
    memset(a, 0, sizeof *a);
    a->zero = true;
}

/* Hold the measured position: PD with the default gains, zero torque and velocity. */
static void hold_here(jl_action_t *a)
{
    float q[JL_MAX_DOF], qd[JL_MAX_DOF];
    jl_board_read_joints(q, qd);
    a->zero = false;
    for (int i = 0; i < d.p.dof; i++) {
        a->pd[i] = 1;
        a->ff[i] = 0.0f;
        a->pos[i] = q[i];
        a->kp[i] = d.p.default_kp[i];
        a->kd[i] = d.p.default_kd[i];
        a->vel[i] = 0.0f;
    }
}

static void zero_drive(void)
{
    d.has_pending = false;
    set_zero(&d.base);
}

/* ------------------------------------------------------------------ handlers */
/* Motion gate: UNPOWERED, then DISARMED, then BRAKED (0 = allowed). */
static uint8_t gate(void)
{
    if (!d.powered)
        return JL_NACK_UNPOWERED;
    if (!d.armed)
        return JL_NACK_DISARMED;
    if (d.brakes && d.any_brakes)
        return JL_NACK_BRAKED;
    return 0;
}

static void cmd_njoint(const frame_t *f)
{
    int n = f->payload[0];
    if (n != d.p.dof) {
        nack(f, JL_NACK_BAD_LENGTH, d.p.dof);
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
            nack(f, JL_NACK_INVALID_VALUE, i);
            return;
        }
    }
    jl_action_t a;
    jl_resolve(v[0], v[1], v[2], v[3], v[4], &a);
    if (!a.zero) {
        uint8_t refused = gate();
        if (refused) {
            nack(f, refused, -1);
            return;
        }
    }
    d.pending = a;
    d.has_pending = true;
    d.last_cmd_tick = d.tick;
    d.stats.commands_accepted++;
}

static void req_hello(const frame_t *f)
{
    d.armed = false;
    d.watchdog_engaged = false;
    zero_drive();
    uint8_t *b = echo(f);
    *b++ = JL_PROTOCOL_VERSION;
    *b++ = d.p.dof;
    b = put_u16(b, d.p.rate_hz);
    b = put_u16(b, d.watchdog_ms);
    b = put_u16(b, d.stream_period);
    memcpy(b, d.p.digest, 32);
    send(JL_ACK, 16, 44, true);
}

static void req_geometry(const frame_t *f)
{
    uint8_t *b = echo(f);
    *b++ = d.p.dof;
    for (int k = 0; k < 3; k++)
        b = put_f32(b, d.p.base_pos[k]);
    for (int k = 0; k < 3; k++)
        b = put_f32(b, d.p.base_orientation[k]);
    for (int i = 0; i < d.p.dof; i++) {
        *b++ = d.p.joint_type[i];
        b = put_f32(b, d.p.length[i]);
        for (int k = 0; k < 3; k++)
            b = put_f32(b, d.p.orientation[i][k]);
        for (int k = 0; k < 3; k++)
            b = put_f32(b, d.p.axis[i][k]);
        b = put_f32(b, d.p.lower[i]);
        b = put_f32(b, 0.5f * (d.p.lower[i] + d.p.upper[i]));
        b = put_f32(b, d.p.upper[i]);
        b = put_f32(b, d.p.home[i]);
        b = put_f32(b, d.config_speed[i]);
        *b++ = d.p.has_brakes[i];
    }
    send(JL_ACK, 3, (uint16_t)(b - (d.body + JL_HEADER_SIZE)), false);
}

/* REQ SPEED / ACCEL: UNKNOWN_JOINT, INVALID_VALUE (NaN, inf), OUT_OF_LIMITS (<= 0, > limit). */
static void req_setting(const frame_t *f, float *config, const float *limit)
{
    int32_t joint = get_i32(f->payload);
    float value = get_f32(f->payload + 4);
    if (joint < 0 || joint >= d.p.dof) {
        nack(f, JL_NACK_UNKNOWN_JOINT, joint);
        return;
    }
    if (!is_finite(value)) {
        nack(f, JL_NACK_INVALID_VALUE, joint);
        return;
    }
    if (!(value > 0.0f && value <= limit[joint] * (1.0f + LIMIT_SLACK))) {
        nack(f, JL_NACK_OUT_OF_LIMITS, joint);
        return;
    }
    config[joint] = value < limit[joint] ? value : limit[joint];
    ack(f);
}

static void handle_req(const frame_t *f)
{
    const uint8_t *p = f->payload;
    switch (f->type) {
    case 1: /* POWER */
        d.powered = p[0];
        if (!p[0]) {
            d.armed = false;
            d.watchdog_engaged = false;
            zero_drive();
        }
        jl_board_set_power(p[0]);
        jl_board_set_brakes(brakes_engaged()); /* unpowered: engaged where fitted */
        ack(f);
        return;
    case 2: /* BRAKES */
        if (!p[0] && !d.powered) {
            nack(f, JL_NACK_UNPOWERED, -1);
            return;
        }
        d.brakes = p[0];
        if (p[0])
            zero_drive();
        jl_board_set_brakes(brakes_engaged());
        ack(f);
        return;
    case 3:
        req_geometry(f);
        return;
    case 4:
        req_setting(f, d.config_speed, d.p.velocity_limit);
        return;
    case 5:
        req_setting(f, d.config_accel, d.p.accel_limit);
        return;
    case 16:
        req_hello(f);
        return;
    case 17: /* ARM: latch the present position (docs/firmware.md) */
        if (!d.powered) {
            nack(f, JL_NACK_UNPOWERED, -1);
            return;
        }
        if (!d.armed) {
            d.has_pending = false;
            hold_here(&d.base);
            d.armed = true;
        }
        d.last_cmd_tick = d.tick;
        ack(f);
        return;
    case 18: /* DISARM */
        d.armed = false;
        d.watchdog_engaged = false;
        zero_drive();
        ack(f);
        return;
    case 19: /* STOP: both modes hold the measured position (docs/firmware.md) */
        if (d.armed && !(d.brakes && d.any_brakes)) {
            d.has_pending = false;
            hold_here(&d.base);
        }
        ack(f);
        return;
    case 20: /* HEARTBEAT: does not feed the watchdog */
        ack(f);
        return;
    case 21:
        d.watchdog_ms = get_u16(p);
        d.watchdog_action = p[2];
        ack(f);
        return;
    case 22:
        d.stream_period = get_u16(p);
        ack(f);
        return;
    default: /* STEP, SET_STATE: lockstep only; this is a real-time device */
        nack(f, JL_NACK_UNSUPPORTED, -1);
        return;
    }
}

/* ------------------------------------------------------------------ frame checks */
/* Payload size of a host message: fixed (>= 0), or -(record size) for "1 + record·n";
 * -1000 for a (class, type) the protocol does not define from host to device. */
static int expected_size(uint8_t cls, uint8_t type)
{
    static const int8_t cmd[17] = {-1, 8, -4, 8, -4, 4, 8, -4, -1, -1, -1, -1, -1, -1, -1, -1, -20};
    static const int8_t req[25] = {-1, 1, 1, 0, 8, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                   1, 0, 0, 1, 0, 3, 2, 8, -8};
    if (cls == JL_CMD && type < 17 && (cmd[type] != -1 || type == 0))
        return type == 0 ? -1000 : cmd[type];
    if (cls == JL_REQ && type < 25 && type > 0 && req[type] != -1)
        return req[type];
    return -1000;
}

/* A good-CRC frame: parse, answer or act (sections 2 step 5, 8, 9). */
static void dispatch(const frame_t *f, size_t payload_len)
{
    bool reply_class = f->cls == JL_ACK || f->cls == JL_NACK;
    if (f->length != payload_len) {
        d.stats.malformed++;
        if (!reply_class)
            nack(f, JL_NACK_BAD_LENGTH, -1);
        return;
    }
    if (reply_class) /* never answered */
        return;
    int size = expected_size(f->cls, f->type);
    if (size == -1000) {
        d.stats.unknown_types++;
        nack(f, JL_NACK_UNSUPPORTED, -1);
        return;
    }
    bool hello = f->cls == JL_REQ && f->type == 16;
    if (f->version != JL_PROTOCOL_VERSION && !hello) {
        d.stats.version_mismatches++;
        nack(f, JL_NACK_VERSION_MISMATCH, JL_PROTOCOL_VERSION);
        return;
    }
    const uint8_t *p = f->payload;
    bool ok_length = size >= 0 ? payload_len == (size_t)size
                               : (payload_len >= 1 && payload_len == 1u + (size_t)(-size) * p[0]);
    if (!ok_length) {
        d.stats.malformed++;
        nack(f, JL_NACK_BAD_LENGTH, -1);
        return;
    }
    bool bad_value = (f->cls == JL_REQ && (f->type == 1 || f->type == 2 || f->type == 19) &&
                      p[0] > 1) ||
                     (f->cls == JL_REQ && f->type == 21 && p[2] > 1);
    if (bad_value) {
        d.stats.malformed++;
        nack(f, JL_NACK_INVALID_VALUE, -1);
        return;
    }
    if (f->cls == JL_REQ) {
        handle_req(f);
    } else if (f->type == 16) {
        cmd_njoint(f);
    } else { /* the Player commands: not implemented by the reference firmware */
        nack(f, JL_NACK_UNSUPPORTED, -1);
    }
}

static void sequence(uint16_t seq, const uint8_t *raw)
{
    bool hello = raw[1] == JL_REQ && raw[2] == 16;
    if (d.have_expected && seq != d.expected && !hello) {
        uint16_t delta = (uint16_t)(seq - d.expected);
        if (delta < 0x8000u) {
            d.stats.sequence_gaps++;
            d.stats.frames_missed += delta;
        } else {
            d.stats.out_of_order++;
        }
    }
    d.have_expected = true;
    d.expected = (uint16_t)(seq + 1);
}

/* One run between delimiters (COBS-encoded, decoded here in place). */
static void frame_run(uint8_t *run, size_t n)
{
    int m = jl_cobs_decode(run, n);
    if (m < 0) {
        d.stats.cobs_errors++;
        return;
    }
    if (m < JL_HEADER_SIZE + 2) {
        d.stats.runts++;
        return;
    }
    size_t trailer;
    if (run[0] == 1) {
        trailer = jl_crc16(run, (size_t)m) == 0 ? 2 : 0;
    } else {
        trailer = (m >= JL_HEADER_SIZE + 4 && jl_crc32(0, run, (size_t)m) == JL_CRC32_RESIDUE) ? 4
                                                                                             : 0;
    }
    if (!trailer) {
        d.stats.crc_errors++;
        return;
    }
    d.stats.frames++;
    frame_t f = {run[0], run[1], run[2], get_u16(run + 3), get_u16(run + 5), run + 7};
    sequence(f.seq, run);
    dispatch(&f, (size_t)m - JL_HEADER_SIZE - trailer);
}

void jl_receive(const uint8_t *data, size_t n)
{
    d.stats.bytes_received += (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = data[i];
        if (b == 0) {
            if (d.synced && !d.discarding && d.rx_len)
                frame_run(d.rx, d.rx_len);
            d.rx_len = 0;
            d.discarding = false;
            d.synced = true;
            continue;
        }
        if (!d.synced || d.discarding)
            continue;
        if (d.rx_len == sizeof d.rx) {
            d.stats.overruns++;
            d.discarding = true;
            d.rx_len = 0;
            continue;
        }
        d.rx[d.rx_len++] = b;
    }
}

/* ------------------------------------------------------------------ tick */
void jl_tick(void)
{
    d.tick++;
    if (d.has_pending) {
        d.base = d.pending;
        d.has_pending = false;
        d.watchdog_engaged = false;
    }
    memcpy(d.qd_prev, d.qd, sizeof d.qd);
    jl_board_read_joints(d.q, d.qd);
    if (d.armed && d.watchdog_ms && !d.watchdog_engaged &&
        (d.tick - d.last_cmd_tick) * 1000u > (uint64_t)d.watchdog_ms * d.p.rate_hz) {
        d.watchdog_engaged = true;
        if (d.watchdog_action == 1) {
            d.brakes = true;
            jl_board_set_brakes(true);
            set_zero(&d.base);
        } else {
            hold_here(&d.base);
        }
    }
    if (!d.powered || d.brakes || !d.armed)
        memset(d.tau, 0, sizeof d.tau);
    else
        jl_law(&d.base, d.q, d.qd, d.tau);
    jl_board_set_torque(d.tau);
    if (d.stream_period && d.tick % d.stream_period == 0)
        send_state();
}

/* ------------------------------------------------------------------ start-up */
void jl_init(const jl_params_t *params)
{
    memset(&d, 0, sizeof d);
    d.p = *params;
    if (d.p.dof > JL_MAX_DOF)
        d.p.dof = JL_MAX_DOF;
    for (int i = 0; i < d.p.dof; i++) {
        d.config_speed[i] = d.p.config_speed[i] > 0 ? d.p.config_speed[i] : d.p.velocity_limit[i];
        d.config_accel[i] = d.p.accel_limit[i];
        d.any_brakes |= d.p.has_brakes[i] != 0;
    }
    d.powered = true;
    d.watchdog_ms = 100;
    d.stream_period = 1;
    set_zero(&d.base);
    jl_board_read_joints(d.q, d.qd);
    memcpy(d.qd_prev, d.qd, sizeof d.qd);
    jl_board_set_power(true);
    jl_board_set_brakes(false);
    jl_board_set_torque(d.tau);
    static const uint8_t zero = 0;
    jl_board_uart_write(&zero, 1);
}

const jl_stats_t *jl_stats(void) { return &d.stats; }
uint64_t jl_tick_count(void) { return d.tick; }
bool jl_armed(void) { return d.armed; }
bool jl_powered(void) { return d.powered; }
bool jl_brakes(void) { return d.brakes; }
bool jl_watchdog_engaged(void) { return d.watchdog_engaged; }
const float *jl_last_torque(void) { return d.tau; }
const jl_action_t *jl_action(void) { return &d.base; }
