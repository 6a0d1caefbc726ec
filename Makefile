# JointLab: `make demo` and `make test` are the whole set-up (see README.md, "Set-up").
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Where torch and torchvision come from. Empty: the default package index (for this pair on
# Linux that is the CUDA build, several GB). The CPU build:
# make test TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
TORCH := torch==2.14.1 torchvision==0.29.1
# LeRobot, for the interop tests: without its own dependency pins (its torch<2.11 pin
# conflicts with ours); the `lerobot` extra of pyproject.toml brings what it imports, the
# `lerobot-scripts` extra what its console scripts (lerobot-record, -teleoperate, -train,
# -eval) import on top, and the three plugins in plugins/ are what LeRobot discovers as
# --robot.type=jointlab, --teleop.type=jointlab_leader and --env.type=jointlab.
LEROBOT := lerobot==0.4.4
# torch's CUDA build brings triton, a GPU kernel compiler (nothing here runs on a GPU). Its
# bundled LLVM crashes the process (segmentation fault) when it is imported after Mesa's
# LLVM is loaded, as by MuJoCo's offscreen renderer: a MuJoCo render then an SB3 model in one
# process (tests/envs/test_render_then_train.py). The CPU build has no triton.
TRITON_OUT := $(BIN)/python -m pip uninstall -y -q triton

.PHONY: demo test notebooks lint bench clean firmware firmware-deps browser-deps ffmpeg-deps

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Runtime dependencies only: enough for `jointlab demo`, the CLI and the Python API (the
# servo arms' vendor SDKs included).
$(VENV)/.installed-runtime: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -e .
	touch $@

# Everything the tests need: the test tools, Stable-Baselines3, Ray RLlib, moviepy and the
# MuJoCo engine, LeRobot, and
# the MCAP and Rerun writers of `jointlab export` (whose tests read their files back), and
# ROS 2's rclpy and messages (the bridge's two-process tests).
$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(if $(TORCH_INDEX),$(BIN)/python -m pip install $(TORCH) --index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install -e ".[test,rl,distributed,video,mujoco,lerobot,lerobot-scripts,view,export,ros2]"
	$(BIN)/python -m pip install --no-deps "$(LEROBOT)"
	$(BIN)/python -m pip install --no-deps --no-build-isolation -e plugins/lerobot_robot_jointlab \
		-e plugins/lerobot_teleoperator_jointlab -e plugins/lerobot_env_jointlab
	$(TRITON_OUT)
	touch $@ $(VENV)/.installed-runtime

demo: $(VENV)/.installed-runtime
	$(BIN)/jointlab demo --force

# The reference firmware's toolchain, emulator and profiler are Debian packages
# (docs/firmware.md); installed when missing (CI runs as root). Elsewhere a failed install
# is only a warning: the firmware tests then skip, except with CI set, where they fail.
FIRMWARE_APT := gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm valgrind
firmware-deps:
	@if ! command -v arm-none-eabi-gcc >/dev/null || ! command -v qemu-system-arm >/dev/null \
	    || ! command -v valgrind >/dev/null; then \
	  (apt-get update && apt-get install -y $(FIRMWARE_APT)) \
	    || { echo "firmware-deps: could not install $(FIRMWARE_APT)"; test -z "$$CI"; }; \
	fi

# Host unit tests, the Cortex-M3 build with its flash/RAM sizes, the worst-case tick.
firmware: firmware-deps $(VENV)/.installed-runtime
	$(MAKE) -C firmware host-test arm pil cycles PYTHON=$(abspath $(BIN)/python)

# Headless Chromium for the live view's browser test and `jointlab view --screenshot`;
# installed when missing (as root; CI). Elsewhere a failed install is only a warning: the
# browser test then skips, except with CI set, where it fails.
browser-deps:
	@if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null \
	    && ! command -v google-chrome >/dev/null; then \
	  (apt-get update && apt-get install -y chromium) \
	    || { echo "browser-deps: could not install chromium"; test -z "$$CI"; }; \
	fi

# FFmpeg's shared libraries (Debian bookworm's FFmpeg 5), which torchcodec, LeRobot's video
# decoder, loads; installed when missing (as root; CI). Elsewhere a failed install is only a
# warning: LeRobot then cannot decode dataset videos, except with CI set, where it fails.
FFMPEG_APT := libavutil57 libavcodec59 libavformat59 libavdevice59 libavfilter8 libswscale6 \
	libswresample4
ffmpeg-deps:
	@if ! ldconfig -p | grep -q 'libavutil\.so\.'; then \
	  (apt-get update && apt-get install -y --no-install-recommends $(FFMPEG_APT)) \
	    || { echo "ffmpeg-deps: could not install $(FFMPEG_APT)"; test -z "$$CI"; }; \
	fi

test: $(VENV)/.installed-test firmware-deps browser-deps ffmpeg-deps
	$(BIN)/ruff check jointlab tests benchmarks examples plugins
	$(BIN)/ruff format --check jointlab tests benchmarks examples plugins
	$(BIN)/python -m pytest -n 2 --timeout 600 tests

notebooks: $(VENV)/.installed-runtime
	$(if $(TORCH_INDEX),$(BIN)/python -m pip install $(TORCH) --index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install -e ".[notebooks,rl,mujoco]"
	$(TRITON_OUT)
	$(BIN)/jupyter lab notebooks/

lint: $(VENV)/.installed-test
	$(BIN)/ruff check jointlab tests benchmarks examples plugins
	$(BIN)/ruff format --check jointlab tests benchmarks examples plugins

bench: $(VENV)/.installed-test
	$(BIN)/jointlab bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
