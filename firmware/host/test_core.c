/* Unit tests of the portable core on the host (plain asserts; run by tests/firmware/). */
#undef NDEBUG
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jl_core.h"
#include "jl_wire.h"

void jlh_set_joints(const float *q, const float *qd, int n);
size_t jlh_take(uint8_t *buf, size_t max);
const float *jlh_torque(void);
int jlh_brakes(void);
void jlh_init(int dof, const float *kp, const float *kd, const float *effort,
              const float *lower, const float *upper, const float *velocity_limit,
              const float *config_speed, const float *accel_limit, const float *home,
              const uint8_t *has_brakes,
              const uint8_t *digest);

static uint8_t got[8192];
static int checks;
#define CHECK(c) (assert(c), checks++)

static size_t take(void) { return jlh_take(got, sizeof got); }

/* Send one version 2 frame to the core. */
static void send_frame(uint8_t cls, uint8_t type, uint16_t seq, const uint8_t *payload,
                       uint16_t n)
{
    uint8_t body[512], wire[600];
    body[0] = 2, body[1] = cls, body[2] = type;
    body[3] = (uint8_t)seq, body[4] = (uint8_t)(seq >> 8);
    body[5] = (uint8_t)n, body[6] = (uint8_t)(n >> 8);
    if (n)
        memcpy(body + 7, payload, n);
    uint32_t crc = jl_crc32(0, body, 7u + n);
    for (int i = 0; i < 4; i++)
        body[7 + n + i] = (uint8_t)(crc >> (8 * i));
    wire[0] = 0;
    size_t m = jl_cobs_encode(body, 11u + n, wire + 1);
    wire[m + 1] = 0;
    jl_receive(wire, m + 2);
}

static void njoint2(uint16_t seq, const float v[10])
{
    uint8_t p[41];
    p[0] = 2;
    memcpy(p + 1, v, 40); /* little-endian host */
    send_frame(1, 16, seq, p, 41);
}

static void start(float q0)
{
    const float kp[2] = {10, 20}, kd[2] = {1, 2}, eff[2] = {5, 3}, lo[2] = {-2, -2},
                hi[2] = {2, 2}, vl[2] = {4, 4}, al[2] = {8, 8};
    const uint8_t brakes[2] = {0, 1};
    uint8_t digest[32];
    for (int i = 0; i < 32; i++)
        digest[i] = (uint8_t)i;
    float q[2] = {q0, 0}, qd[2] = {0, 0};
    jlh_set_joints(q, qd, 2);
    jlh_init(2, kp, kd, eff, lo, hi, vl, vl, al, q, brakes, digest);
}

static void test_crc_cobs(void)
{
    const uint8_t check[] = "123456789";
    CHECK(jl_crc32(0, check, 9) == 0xCBF43926u);
    CHECK(jl_crc16(check, 9) == 0x29B1u);
    uint8_t frame[13] = {2, 2, 17, 1, 0, 0, 0};
    uint32_t crc = jl_crc32(0, frame, 7);
    memcpy(frame + 7, &crc, 4);
    CHECK(jl_crc32(0, frame, 11) == JL_CRC32_RESIDUE);
    uint8_t src[700], enc[710];
    for (int len = 0; len < 700; len += 37) {
        for (int i = 0; i < len; i++)
            src[i] = (uint8_t)((i * 7) % 5 == 0 ? 0 : i + 1);
        size_t m = jl_cobs_encode(src, (size_t)len, enc);
        for (size_t i = 0; i < m; i++)
            CHECK(enc[i] != 0);
        CHECK(jl_cobs_decode(enc, m) == len);
        CHECK(memcmp(enc, src, (size_t)len) == 0);
    }
    uint8_t bad[3] = {5, 1, 1}; /* code points past the end */
    CHECK(jl_cobs_decode(bad, 3) == -1);
}

static void test_handshake_examples(void)
{
    /* docs/protocol.md section 12, byte for byte. */
    static const uint8_t hello[] = {0x00, 0x04, 0x01, 0x02, 0x10, 0x01, 0x02, 0x01, 0x04,
                                    0x02, 0x1b, 0xf8, 0x00};
    static const uint8_t reply[] = {
        0x00, 0x04, 0x01, 0x04, 0x10, 0x01, 0x02, 0x2c, 0x03, 0x02, 0x10, 0x01, 0x06, 0x02,
        0x02, 0xe8, 0x03, 0x64, 0x02, 0x01, 0x01, 0x22, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
        0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14,
        0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0xab, 0xce, 0x00};
    static const uint8_t arm[] = {0x00, 0x05, 0x02, 0x02, 0x11, 0x01, 0x01, 0x01,
                                  0x05, 0x0b, 0xb6, 0x07, 0xa2, 0x00};
    static const uint8_t arm_ack[] = {0x00, 0x03, 0x02, 0x04, 0x02, 0x01, 0x02, 0x04, 0x04,
                                      0x02, 0x11, 0x01, 0x05, 0x52, 0xda, 0xcd, 0xc3, 0x00};
    start(0);
    CHECK(take() == 1 && got[0] == 0); /* the start-up 0x00 */
    jl_receive(hello, sizeof hello);
    CHECK(take() == sizeof reply && memcmp(got, reply, sizeof reply) == 0);
    jl_receive(arm, sizeof arm);
    CHECK(take() == sizeof arm_ack && memcmp(got, arm_ack, sizeof arm_ack) == 0);
    CHECK(jl_armed());
}

static void test_law_and_latch(void)
{
    start(0.3f);
    take();
    send_frame(2, 17, 0, NULL, 0); /* ARM latches q = 0.3 */
    take();
    float q[2] = {0.4f, 0}, qd[2] = {0, 0.5f};
    jlh_set_joints(q, qd, 2);
    jl_tick();
    const float *tau = jlh_torque();
    CHECK(fabsf(tau[0] - 10 * (0.3f - 0.4f)) < 1e-6f); /* hold-present, default gains */
    CHECK(fabsf(tau[1] - 2 * (0 - 0.5f)) < 1e-6f);
    float nan = NAN;
    float v[10] = {0.5f, -1.0f, 0.5f, nan, nan, nan, nan, nan, nan, nan};
    njoint2(1, v);
    CHECK(fabsf(jlh_torque()[0] - 10 * (0.3f - 0.4f)) < 1e-6f); /* not before the tick */
    jl_tick();
    CHECK(fabsf(tau[0] - (0.5f + 10 * (0.5f - 0.4f))) < 1e-5f && tau[1] == -1.0f);
    float big[10] = {100, -100, nan, nan, nan, nan, nan, nan, nan, nan};
    njoint2(2, big);
    jl_tick();
    CHECK(tau[0] == 5.0f && tau[1] == -3.0f); /* effort clamp */
    take();
    CHECK(jl_stats()->commands_accepted == 2 && jl_stats()->crc_errors == 0);
}

static void test_refusals(void)
{
    start(0);
    take();
    float nan = NAN;
    float v[10] = {0.5f, 0, nan, nan, nan, nan, nan, nan, nan, nan};
    njoint2(5, v); /* disarmed */
    CHECK(take() > 0 && jl_stats()->commands_refused == 1);
    float zero[10] = {0, 0, nan, nan, nan, nan, nan, nan, nan, nan};
    njoint2(6, zero); /* Zero is accepted in every state */
    CHECK(take() == 0 && jl_stats()->commands_accepted == 1);
    v[0] = INFINITY;
    njoint2(7, v);
    CHECK(take() > 0 && jl_stats()->commands_refused == 2);
    uint8_t hb[1] = {0};
    send_frame(2, 23, 8, hb, 1); /* STEP: wrong length and real-time device */
    CHECK(take() > 0 && jl_stats()->malformed == 1);
    send_frame(2, 99, 9, NULL, 0);
    CHECK(take() > 0 && jl_stats()->unknown_types == 1);
    send_frame(4, 0, 10, hb, 1); /* an ACK is never answered */
    CHECK(take() == 0);
}

static void test_power_engages_the_brakes(void)
{
    start(0);
    uint8_t off = 0, on = 1;
    send_frame(2, 1, 0, &off, 1); /* POWER 0: brakes engaged where fitted (joint 1) */
    CHECK(!jl_powered() && jlh_brakes() == 1);
    jl_tick();
    CHECK(take() > 0 && jlh_torque()[0] == 0.0f);
    send_frame(2, 1, 1, &on, 1); /* POWER 1: released again (not requested) */
    CHECK(jl_powered() && jlh_brakes() == 0);
    send_frame(2, 2, 2, &on, 1); /* BRAKES 1, then POWER cycle: they stay engaged */
    send_frame(2, 1, 3, &off, 1);
    send_frame(2, 1, 4, &on, 1);
    CHECK(jlh_brakes() == 1 && jl_brakes());
    take();
}

static void test_stop_decelerates_at_the_configured_acceleration(void)
{
    start(0);
    uint8_t no_watchdog[3] = {0, 0, 0};
    send_frame(2, 21, 0, no_watchdog, 3);
    send_frame(2, 17, 0, NULL, 0);
    float q[2] = {0.5f, 0}, qd[2] = {1.0f, -0.4f};
    jlh_set_joints(q, qd, 2);
    uint8_t decelerate = 1;
    send_frame(2, 19, 1, &decelerate, 1); /* accelerations 8 rad/s^2 (test robot) */
    jl_tick();
    const jl_action_t *a = jl_action();
    CHECK(fabsf(a->vel[0] - (1.0f - 8 * 0.001f)) < 1e-6f && a->kp[0] == 10.0f);
    CHECK(fabsf(a->vel[1] - (-0.4f + 8 * 0.001f)) < 1e-6f);
    CHECK(fabsf(a->pos[0] - (0.5f + 0.001f - 4 * 1e-6f)) < 1e-6f);
    for (int t = 0; t < 200; t++)
        jl_tick();
    CHECK(a->vel[0] == 0.0f && fabsf(a->pos[0] - (0.5f + 1.0f / 16)) < 1e-5f);
    CHECK(a->vel[1] == 0.0f && fabsf(a->pos[1] - (-0.16f / 16)) < 1e-5f);
    take();
}

static void test_watchdog(void)
{
    start(0);
    send_frame(2, 17, 0, NULL, 0);
    float nan = NAN;
    float v[10] = {1, 1, nan, nan, nan, nan, nan, nan, nan, nan};
    njoint2(1, v);
    for (int t = 0; t < 100; t++) {
        jl_tick();
        CHECK(!jl_watchdog_engaged() && jlh_torque()[0] == 1.0f);
    }
    float q[2] = {0.25f, 0}, qd[2] = {0, 0};
    jlh_set_joints(q, qd, 2);
    jl_tick(); /* 101 ms after the command: engaged within one tick, holds q = 0.25 */
    CHECK(jl_watchdog_engaged() && jlh_torque()[0] == 0.0f);
    njoint2(2, v);
    jl_tick();
    CHECK(!jl_watchdog_engaged() && jlh_torque()[0] == 1.0f);
    take();
}

static void test_corruption(void)
{
    start(0);
    take();
    uint8_t junk[2000];
    memset(junk, 0x41, sizeof junk);
    junk[0] = 0;                   /* synced: bytes before the first 0x00 are not counted */
    jl_receive(junk, sizeof junk); /* an overrun */
    static const uint8_t arm[] = {0x00, 0x05, 0x02, 0x02, 0x11, 0x01, 0x01, 0x01,
                                  0x05, 0x0b, 0xb6, 0x07, 0xa2, 0x00};
    uint8_t flipped[sizeof arm];
    memcpy(flipped, arm, sizeof arm);
    flipped[9] ^= 0x10;
    jl_receive(flipped, sizeof flipped);
    CHECK(take() == 0 && !jl_armed());
    CHECK(jl_stats()->overruns == 1 && jl_stats()->crc_errors == 1);
    jl_receive(arm, sizeof arm);
    CHECK(take() > 0 && jl_armed());
}

static uint32_t rng_state = 36u;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* Frames with a good CRC and random contents reach every handler: under ASan/UBSan (see
 * tests/firmware/test_core.py) no access goes out of bounds, and whatever is accepted, the
 * motors never get a torque beyond the effort limits or a NaN. */
static void test_random_good_crc_frames(void)
{
    static const uint8_t types[] = {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 24};
    start(0);
    send_frame(2, 17, 0, NULL, 0);
    uint8_t payload[256];
    for (int k = 0; k < 20000; k++) {
        uint8_t cls = (uint8_t)(rnd() % 7);
        uint8_t type = (rnd() % 4) ? types[rnd() % sizeof types] : (uint8_t)rnd();
        uint16_t n = (uint16_t)(rnd() % 3 ? rnd() % 48 : 41); /* 41: a 2-joint NJOINT */
        for (int i = 0; i < n; i++)
            payload[i] = (uint8_t)rnd();
        if (n == 41 && rnd() % 2) { /* an NJOINT of edge values */
            static const float edge[] = {NAN, 0.0f, 1.0f, -1.0f, 1e3f, -1e3f, 1e9f, 1e30f,
                                         -1e-30f, INFINITY, 0.5f, 2.0f};
            cls = 1, type = 16, payload[0] = 2;
            for (int i = 0; i < 10; i++) {
                float v = edge[rnd() % (sizeof edge / sizeof edge[0])];
                memcpy(payload + 1 + 4 * i, &v, 4);
            }
        }
        if (rnd() % 50 == 0) /* re-arm now and then, so that commands are accepted */
            send_frame(2, 17, (uint16_t)k, NULL, 0);
        send_frame(cls, type, (uint16_t)k, payload, n);
        if (k % 7 == 0) {
            jl_tick();
            const float *tau = jlh_torque();
            CHECK(tau[0] >= -5.0f && tau[0] <= 5.0f && tau[1] >= -3.0f && tau[1] <= 3.0f);
        }
        take();
    }
    CHECK(jl_stats()->frames > 20000 && jl_stats()->crc_errors == 0);
    CHECK(jl_stats()->commands_accepted > 100 && jl_stats()->commands_refused > 100);
}

int main(void)
{
    test_crc_cobs();
    test_handshake_examples();
    test_law_and_latch();
    test_refusals();
    test_power_engages_the_brakes();
    test_stop_decelerates_at_the_configured_acceleration();
    test_watchdog();
    test_corruption();
    test_random_good_crc_frames();
    printf("firmware core: %d checks passed\n", checks);
    return 0;
}
