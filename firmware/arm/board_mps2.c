/* Board layer for QEMU's mps2-an385 (Cortex-M3, 25 MHz): CMSDK UART0 to the host, SysTick
 * as the 1 kHz tick timer, and simulated motors (one rigid link per joint, inertia and
 * viscous damping, integrated at the tick) behind the motor outputs and encoder inputs.
 * A real board replaces the four motor/encoder functions with its drivers (docs/firmware.md).
 */
#include <stdint.h>

#include "jl_board.h"
#include "jl_core.h"
#include "jl_robot.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define UART0 0x40004000u
#define UART_DATA REG(UART0 + 0x00)
#define UART_STATE REG(UART0 + 0x04) /* bit 0: TX full, bit 1: RX full */
#define UART_CTRL REG(UART0 + 0x08)  /* bit 0: TX enable, bit 1: RX enable */
#define UART_BAUDDIV REG(UART0 + 0x10)
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define CPU_HZ 25000000u

static volatile uint32_t ticks_due;
static float q[JL_MAX_DOF], qd[JL_MAX_DOF], tau[JL_MAX_DOF];
static bool power_on, brakes_on;

void systick_handler(void) { ticks_due++; }

void jl_board_uart_write(const uint8_t *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        while (UART_STATE & 1u)
            ;
        UART_DATA = data[i];
    }
}

void jl_board_read_joints(float *q_out, float *qd_out)
{
    for (int i = 0; i < JL_ROBOT.dof; i++)
        q_out[i] = q[i], qd_out[i] = qd[i];
}

void jl_board_set_torque(const float *t)
{
    for (int i = 0; i < JL_ROBOT.dof; i++)
        tau[i] = t[i];
}

void jl_board_read_torque(float *t)
{
    for (int i = 0; i < JL_ROBOT.dof; i++)
        t[i] = tau[i];
}

void jl_board_set_state(const float *q_in, const float *qd_in)
{
    for (int i = 0; i < JL_ROBOT.dof; i++)
        q[i] = q_in[i], qd[i] = qd_in[i];
}

void jl_board_set_power(bool on) { power_on = on; }
void jl_board_set_brakes(bool engaged) { brakes_on = engaged; }

/* The simulated motors: J qdd = tau - b qd, stopped by the brakes and the joint limits. */
static void plant_step(void)
{
    const float dt = 1.0f / (float)JL_ROBOT.rate_hz, inertia = 0.05f, damping = 0.5f;
    for (int i = 0; i < JL_ROBOT.dof; i++) {
        if (brakes_on && JL_ROBOT.has_brakes[i]) {
            qd[i] = 0.0f;
            continue;
        }
        float torque = power_on ? tau[i] : 0.0f;
        qd[i] += (torque - damping * qd[i]) / inertia * dt;
        q[i] += qd[i] * dt;
        if (q[i] < JL_ROBOT.lower[i] || q[i] > JL_ROBOT.upper[i]) {
            q[i] = q[i] < JL_ROBOT.lower[i] ? JL_ROBOT.lower[i] : JL_ROBOT.upper[i];
            qd[i] = 0.0f;
        }
    }
}

int main(void)
{
    for (int i = 0; i < JL_ROBOT.dof; i++)
        q[i] = JL_ROBOT.home[i];
    UART_BAUDDIV = 16;
    UART_CTRL = 3u;
    jl_init(&JL_ROBOT);
    SYST_RVR = CPU_HZ / JL_ROBOT.rate_hz - 1u;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* processor clock, interrupt, enable */
    for (;;) {
        while (UART_STATE & 2u) {
            uint8_t byte = (uint8_t)UART_DATA;
            jl_receive(&byte, 1);
        }
        if (ticks_due) {
            ticks_due = 0; /* after a stall (host not reading), resume; never burst-catch-up */
            plant_step();
            jl_tick();
        }
    }
}
