/* Board layer of the host build: a recorded UART and a settable plant, for tests.
 *
 * The plant is whatever the test says (jlh_set_joints); the torques the core writes and
 * the bytes it sends are kept for the test to read (jlh_torque, jlh_take). Exposed to
 * Python through ctypes (tests/firmware/). Not part of a real port.
 */
#include <string.h>

#include "jl_board.h"
#include "jl_core.h"

#define OUT_SIZE 65536

static uint8_t out[OUT_SIZE];
static size_t out_len;
static size_t out_lost;
static float plant_q[JL_MAX_DOF], plant_qd[JL_MAX_DOF], torque[JL_MAX_DOF];
static int power = -1, brakes = -1, plant_dof;

void jl_board_uart_write(const uint8_t *data, size_t n)
{
    size_t room = OUT_SIZE - out_len;
    size_t k = n < room ? n : room;
    memcpy(out + out_len, data, k);
    out_len += k;
    out_lost += n - k;
}
void jl_board_read_joints(float *q, float *qd)
{
    memcpy(q, plant_q, sizeof plant_q);
    memcpy(qd, plant_qd, sizeof plant_qd);
}
void jl_board_set_torque(const float *tau) { memcpy(torque, tau, sizeof torque); }
void jl_board_read_torque(float *tau) { memcpy(tau, torque, sizeof torque); }
void jl_board_set_state(const float *q, const float *qd)
{
    for (int i = 0; i < plant_dof; i++)
        plant_q[i] = q[i], plant_qd[i] = qd[i];
}
void jl_board_set_power(bool on) { power = on; }
void jl_board_set_brakes(bool engaged) { brakes = engaged; }

/* ---- test access ---- */
void jlh_set_joints(const float *q, const float *qd, int n)
{
    memcpy(plant_q, q, sizeof(float) * (size_t)n);
    memcpy(plant_qd, qd, sizeof(float) * (size_t)n);
}
/* What the encoders read now (after a REQ SET_STATE: where it put the joints). */
void jlh_joints(float *q, float *qd)
{
    memcpy(q, plant_q, sizeof(float) * (size_t)plant_dof);
    memcpy(qd, plant_qd, sizeof(float) * (size_t)plant_dof);
}
/* Move the bytes sent so far into buf (at most max); returns how many. */
size_t jlh_take(uint8_t *buf, size_t max)
{
    size_t k = out_len < max ? out_len : max;
    memcpy(buf, out, k);
    memmove(out, out + k, out_len - k);
    out_len -= k;
    return k;
}
size_t jlh_lost(void) { return out_lost; }
const float *jlh_torque(void) { return torque; }
int jlh_power(void) { return power; }
int jlh_brakes(void) { return brakes; }

/* Start the core with a robot given as flat arrays (the generated header's fields). */
void jlh_init(int dof, const float *kp, const float *kd, const float *effort,
              const float *lower, const float *upper, const float *velocity_limit,
              const float *config_speed, const float *accel_limit, const float *home,
              const uint8_t *has_brakes,
              const uint8_t *digest)
{
    static jl_params_t p;
    memset(&p, 0, sizeof p);
    p.dof = (uint8_t)dof;
    plant_dof = dof;
    p.rate_hz = 1000;
    for (int i = 0; i < dof; i++) {
        p.default_kp[i] = kp[i];
        p.default_kd[i] = kd[i];
        p.effort_limit[i] = effort[i];
        p.lower[i] = lower[i];
        p.upper[i] = upper[i];
        p.velocity_limit[i] = velocity_limit[i];
        p.accel_limit[i] = accel_limit[i];
        p.home[i] = home[i];
        p.config_speed[i] = config_speed[i];
        p.has_brakes[i] = has_brakes[i];
        p.joint_type[i] = 2;
        p.amps_per_torque[i] = 1.0f;
        p.axis[i][2] = 1.0f;
    }
    memcpy(p.digest, digest, 32);
    out_len = out_lost = 0;
    memset(torque, 0, sizeof torque);
    jl_init(&p);
}

/* Resolve and run the law on a given state (the Python law comparison). */
void jlh_law(const float *torque_ff, const float *position, const float *kp, const float *kd,
             const float *velocity, const float *q, const float *qd, float *tau)
{
    jl_action_t a;
    jl_resolve(torque_ff, position, kp, kd, velocity, &a);
    jl_law(&a, q, qd, tau);
}
