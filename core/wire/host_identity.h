// Which processes share a host, in the sense that matters to the wire: they
// can hand each other tensors through /dev/shm. Two processes share a host
// when they run under the same kernel boot and in the same network
// namespace. The namespace is part of it so that hosts made as network
// namespaces (the multi-host tests) count as different hosts, and their
// tensors travel inline over TCP as between real machines; the transport
// (ipc or tcp) decides nothing. No LibTorch.
#pragma once

#include <string>

namespace rlwb::core {

// "<hostname>/<boot id>/net:<namespace inode>", the same in every process
// of one host; computed once.
const std::string& host_identity();

}  // namespace rlwb::core
