// Ctrl-C (or SIGTERM) as a stop request for a command-line run: installs
// core's interrupt handler and, while this object lives, turns its flag into
// a request on stop_token(), which the run polls at its safe points.
#pragma once

#include <chrono>
#include <stop_token>
#include <thread>

#include "core/launch/local_launcher.h"

namespace rlwb::app {

class InterruptStop {
 public:
  InterruptStop() {
    core::install_interrupt_handler();
    watch_ = std::jthread([this](std::stop_token done) {
      while (!done.stop_requested() && !core::interrupt_requested())
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (core::interrupt_requested()) stop_.request_stop();
    });
  }
  std::stop_token stop_token() const { return stop_.get_token(); }

 private:
  std::stop_source stop_;
  std::jthread watch_;  // last: it stops and joins before stop_ goes
};

}  // namespace rlwb::app
