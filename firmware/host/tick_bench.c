/* The tick's instruction count in its costliest cases, for `make cycles` (callgrind).
 *
 * Each scenario_* function runs exactly one jl_tick() for the 6-DoF robot of the generated
 * header; callgrind counts the instructions of each (inclusive). Streaming is on (a DATA
 * STATE, COBS and CRC-32 of 153 bytes, every tick), which is the costliest part; the
 * scenarios are the phases a tick can be in (disarmed, new command, steady PD, watchdog
 * engaging, a STOP DECELERATE ramp).
 */
#include <math.h>
#include <string.h>

#include "jl_core.h"
#include "jl_robot.h"
#include "jl_wire.h"

size_t jlh_take(uint8_t *buf, size_t max);
void jlh_set_joints(const float *q, const float *qd, int n);
static uint8_t sink[4096];

static void frame(uint8_t cls, uint8_t type, uint16_t seq, const uint8_t *payload, uint16_t n)
{
    uint8_t body[256], wire[300];
    body[0] = 2, body[1] = cls, body[2] = type, body[3] = (uint8_t)seq, body[4] = 0;
    body[5] = (uint8_t)n, body[6] = 0;
    if (n)
        memcpy(body + 7, payload, n);
    uint32_t crc = jl_crc32(0, body, 7u + n);
    memcpy(body + 7 + n, &crc, 4);
    wire[0] = 0;
    size_t m = jl_cobs_encode(body, 11u + n, wire + 1);
    wire[m + 1] = 0;
    jl_receive(wire, m + 2);
}

__attribute__((noinline)) void scenario_idle_disarmed(void) { jl_tick(); }
__attribute__((noinline)) void scenario_first_njoint(void) { jl_tick(); }
__attribute__((noinline)) void scenario_njoint_full_pd(void) { jl_tick(); }
__attribute__((noinline)) void scenario_watchdog_engages(void) { jl_tick(); }
__attribute__((noinline)) void scenario_stop_decelerating(void) { jl_tick(); }

int main(void)
{
    jl_init(&JL_ROBOT);
    scenario_idle_disarmed();
    frame(2, 17, 1, NULL, 0); /* ARM */
    int n = JL_ROBOT.dof;
    uint8_t p[1 + 20 * JL_MAX_DOF];
    p[0] = (uint8_t)n;
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < n; i++) {
            float v = k == 0 ? 0.1f : (k == 1 ? 0.3f : (k == 4 ? 0.05f : NAN));
            memcpy(p + 1 + 4 * (k * n + i), &v, 4);
        }
    frame(1, 16, 2, p, (uint16_t)(1 + 20 * n));
    scenario_first_njoint();
    for (int t = 0; t < 50; t++)
        jl_tick();
    scenario_njoint_full_pd();
    for (int t = 0; t < 49; t++)
        jl_tick();
    scenario_watchdog_engages();
    int engaged = jl_watchdog_engaged();
    float q[JL_MAX_DOF] = {0}, qd[JL_MAX_DOF];
    for (int i = 0; i < n; i++)
        qd[i] = 0.5f;
    jlh_set_joints(q, qd, n);
    uint8_t decelerate = 1;
    frame(2, 19, 3, &decelerate, 1);
    scenario_stop_decelerating();
    jlh_take(sink, sizeof sink);
    return engaged ? 0 : 1;
}
