# Cross-compiles for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu:
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Target libraries (protobuf, GoogleTest) come from Debian multiarch
# packages (libprotobuf-dev:arm64, libgtest-dev:arm64; see
# scripts/install_deps.sh) under /usr/lib/aarch64-linux-gnu; programs that
# run during the build (protoc, ccache) are the host's. The results run
# under qemu-user: scripts/test_aarch64.sh.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(MACE_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${MACE_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${MACE_CROSS_TRIPLE}-g++)

# Multiarch: CMake then looks for libraries and package configs in
# /usr/lib/aarch64-linux-gnu and never in the host's
# /usr/lib/x86_64-linux-gnu. Headers under /usr/include are shared by both
# architectures (multiarch packages of the same version ship the same ones).
set(CMAKE_LIBRARY_ARCHITECTURE ${MACE_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH /usr/${MACE_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# The generated schema code must come from a protoc of the same release as
# the target's libprotobuf: FindProtobuf finds the host's /usr/bin/protoc
# (programs are searched on the host only).
set(Protobuf_PROTOC_EXECUTABLE /usr/bin/protoc CACHE FILEPATH
    "Host protoc for the cross build")

# How CTest (and scripts) run target programs on this x86-64 host. No -L
# sysroot: the multiarch libc6:arm64 (pulled in by the packages above)
# provides /lib/ld-linux-aarch64.so.1, and its loader must be paired with
# its own libc. `-L /usr/aarch64-linux-gnu` would take the cross
# toolchain's loader (another glibc build) while the loader still finds
# the multiarch libc.so.6 in /lib/aarch64-linux-gnu; that mix hangs in the
# first pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${CMAKE_SYSTEM_PROCESSOR})
