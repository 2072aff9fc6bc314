# Finds every third-party dependency and exposes each as a target:
#   rlwb::torch  LibTorch from the pinned torch wheel (CUDA-enabled; runs on CPU)
#   rlwb::zmq    libzmq + cppzmq      rlwb::seccomp  libseccomp
#   SQLiteCpp, yaml-cpp, nlohmann_json::nlohmann_json, GTest::gtest_main,
#   CLI11::CLI11 (header-only: every program's command line)
#   rlwb::arrow  libarrow + libparquet from the pinned pyarrow wheel (datasets)
# Only targets that need LibTorch link rlwb::torch: its headers are the slow
# part of a build.

set(RLWB_PYTHON "python3" CACHE STRING "Python interpreter that has the torch wheel")
execute_process(
  COMMAND ${RLWB_PYTHON} -c "import torch, os; print(torch.utils.cmake_prefix_path); print(os.path.dirname(torch.__file__))"
  OUTPUT_VARIABLE _torch_out RESULT_VARIABLE _torch_rc ERROR_QUIET
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _torch_rc EQUAL 0)
  message(FATAL_ERROR "RLWB needs the torch wheel: '${RLWB_PYTHON} -c \"import torch\"' failed. "
                      "Run scripts/setup.sh, or pass -DRLWB_PYTHON=/path/to/python-with-torch.")
endif()
string(REPLACE "\n" ";" _torch_out "${_torch_out}")
list(GET _torch_out 0 TORCH_CMAKE_PREFIX)
list(GET _torch_out 1 TORCH_PACKAGE_DIR)
list(APPEND CMAKE_PREFIX_PATH ${TORCH_CMAKE_PREFIX})

# Torch's CMake probes the GPU's architecture with a CUDA try_run that fails on
# a machine without a GPU (and with CMake 3.25 + C++20). Naming the target
# architectures skips the probe: Ampere and Hopper.
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(ENV{TORCH_CUDA_ARCH_LIST} "8.0;9.0")
endif()
find_package(Torch REQUIRED)

# libtorch_cuda needs the NCCL/CUDA libraries of the wheel's nvidia-* packages
# (newer than the system's); tell the linker where they are. At run time
# libtorch's own RPATH finds them.
get_filename_component(_site_packages ${TORCH_PACKAGE_DIR} DIRECTORY)
file(GLOB _nvidia_lib_dirs LIST_DIRECTORIES true ${_site_packages}/nvidia/*/lib)
string(REPLACE ";" ":" _nvidia_rpath_link "${_nvidia_lib_dirs}")
# rlwb::torch compiles against all of LibTorch (the same flags as the wheel's
# `torch` target) but links only its CPU part: a process that loads the CUDA
# libraries as well spends 0.2 s more starting (0.5 s instead of 0.3), and
# every run starts a controller and its workers. rlwb::torch_cuda links the
# CUDA part too: the programs that run CUDA in their own process (the CUDA
# worker rlwb-worker-cuda, the tests, the benchmarks; app/CMakeLists.txt).
add_library(rlwb_torch INTERFACE)
target_link_libraries(rlwb_torch INTERFACE torch_cpu_library c10)
target_include_directories(rlwb_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(rlwb_torch INTERFACE $<TARGET_PROPERTY:torch_cuda,INTERFACE_COMPILE_DEFINITIONS>)
if(TORCH_CXX_FLAGS)
  target_compile_options(rlwb_torch INTERFACE ${TORCH_CXX_FLAGS})
endif()
target_link_options(rlwb_torch INTERFACE "-Wl,-rpath-link,${_nvidia_rpath_link}")
add_library(rlwb::torch ALIAS rlwb_torch)
add_library(rlwb_torch_cuda INTERFACE)
target_link_libraries(rlwb_torch_cuda INTERFACE rlwb_torch ${TORCH_LIBRARIES})
add_library(rlwb::torch_cuda ALIAS rlwb_torch_cuda)

find_package(PkgConfig REQUIRED)
pkg_check_modules(ZMQ REQUIRED IMPORTED_TARGET libzmq)
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)
add_library(rlwb_zmq INTERFACE)
target_link_libraries(rlwb_zmq INTERFACE PkgConfig::ZMQ)
add_library(rlwb::zmq ALIAS rlwb_zmq)
add_library(rlwb::seccomp ALIAS PkgConfig::SECCOMP)

find_package(SQLiteCpp REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(GTest REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(Threads REQUIRED)
# Protocol Buffers and zlib: the gzip'd pprof export of profiles (core/profile/pprof.proto).
# Torch's CMake config defines protobuf::libprotobuf as an empty stand-in (its
# own protobuf is built in and hidden), so RLWB links the library by path.
find_package(Protobuf REQUIRED)
find_package(ZLIB REQUIRED)
add_library(rlwb_protobuf INTERFACE)
target_include_directories(rlwb_protobuf INTERFACE ${Protobuf_INCLUDE_DIRS})
target_link_libraries(rlwb_protobuf INTERFACE ${Protobuf_LIBRARIES})
add_library(rlwb::protobuf ALIAS rlwb_protobuf)

# NCCL's header matching the wheel's libnccl (only workers/spmd_nccl.cpp uses it).
find_path(RLWB_NCCL_INCLUDE_DIR nccl.h PATHS ${_site_packages}/nvidia/nccl/include /usr/local/cuda/include
          NO_DEFAULT_PATH)

# CUPTI, the one libtorch_cuda already links, from the wheel's nvidia-cuda-cupti
# package: the profiler's CUDA kernels (workers/profiler/cupti_kernels.cpp).
# Without it the profiler builds a stand-in that says CUPTI was not built.
find_path(RLWB_CUPTI_INCLUDE_DIR cupti.h PATHS ${_site_packages}/nvidia/cu13/include NO_DEFAULT_PATH)
find_library(RLWB_CUPTI_LIBRARY NAMES cupti libcupti.so.13 PATHS ${_site_packages}/nvidia/cu13/lib NO_DEFAULT_PATH)

# GiNaC (symbolic equivalence in the math checker).
pkg_check_modules(GINAC IMPORTED_TARGET ginac)
if(GINAC_FOUND)
  set(RLWB_GINAC_LIBRARIES PkgConfig::GINAC)
endif()

# Dear ImGui from Debian (libimgui-dev ships the GLFW and OpenGL3 backends as sources).
find_package(OpenGL)
pkg_check_modules(GLFW IMPORTED_TARGET glfw3)
find_path(RLWB_IMGUI_INCLUDE_DIR imgui.h PATH_SUFFIXES imgui)
find_library(RLWB_IMGUI_LIBRARY imgui)
# Debian builds libimgui.a against its separate stb package (font packing).
find_library(RLWB_STB_LIBRARY stb)
if(RLWB_IMGUI_INCLUDE_DIR AND RLWB_IMGUI_LIBRARY AND RLWB_STB_LIBRARY AND GLFW_FOUND AND OPENGL_FOUND)
  add_library(rlwb_imgui INTERFACE)
  target_include_directories(rlwb_imgui INTERFACE ${RLWB_IMGUI_INCLUDE_DIR} ${RLWB_IMGUI_INCLUDE_DIR}/backends)
  target_link_libraries(rlwb_imgui INTERFACE ${RLWB_IMGUI_LIBRARY} ${RLWB_STB_LIBRARY} PkgConfig::GLFW OpenGL::GL)
endif()

# Arrow and Parquet C++ from the pinned pyarrow wheel, which ships libarrow,
# libparquet and their headers as the torch wheel ships LibTorch. Its C++ ABI
# is LibTorch's (the new std::string ABI; libstdc++ symbols up to
# GLIBCXX_3.4.30, which Debian 12's libstdc++ has). Only core/data links it.
execute_process(
  COMMAND ${RLWB_PYTHON} -c "import pyarrow, glob, os; d = pyarrow.get_library_dirs()[0]; print(pyarrow.get_include()); print(min(glob.glob(os.path.join(d, 'libarrow.so.*')), key=len)); print(min(glob.glob(os.path.join(d, 'libparquet.so.*')), key=len))"
  OUTPUT_VARIABLE _arrow_out RESULT_VARIABLE _arrow_rc ERROR_QUIET
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _arrow_rc EQUAL 0)
  message(FATAL_ERROR "RLWB reads Parquet datasets through the pyarrow wheel: '${RLWB_PYTHON} -c \"import pyarrow\"' "
                      "failed. Run scripts/setup.sh (it installs pyarrow from scripts/python-requirements.txt).")
endif()
string(REPLACE "\n" ";" _arrow_out "${_arrow_out}")
list(GET _arrow_out 0 RLWB_ARROW_INCLUDE_DIR)
list(GET _arrow_out 1 RLWB_ARROW_LIBRARY)
list(GET _arrow_out 2 RLWB_PARQUET_LIBRARY)
add_library(rlwb_arrow INTERFACE)
target_include_directories(rlwb_arrow SYSTEM INTERFACE ${RLWB_ARROW_INCLUDE_DIR})
target_link_libraries(rlwb_arrow INTERFACE ${RLWB_PARQUET_LIBRARY} ${RLWB_ARROW_LIBRARY})
get_filename_component(_arrow_dir ${RLWB_ARROW_LIBRARY} DIRECTORY)
target_link_options(rlwb_arrow INTERFACE "-Wl,-rpath,${_arrow_dir}")
add_library(rlwb::arrow ALIAS rlwb_arrow)
