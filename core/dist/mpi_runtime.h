#pragma once
// Open MPI, loaded at run time (core/dist only). Why not linked: a single-process run must not need an
// MPI runtime. Linking libmpi into headroom_core would make every `headroom` (and every test binary)
// fail to start on a machine without Open MPI (a GPU test machine may have none), and Open MPI's
// MPI_Init outside mpirun starts a singleton runtime (it forks an orted) that a desktop tool has no use
// for. So libmpi.so.40 is dlopen()ed (RTLD_GLOBAL: Open MPI's own plug-ins resolve symbols against it)
// the first time a communicator needs it, and only in a process mpirun started. The build compiles
// against Open MPI's mpi.h for the types and takes the predefined handles (MPI_COMM_WORLD, MPI_FLOAT,
// MPI_SUM, ...) from their Open MPI symbols (ompi_mpi_comm_world, ...): the Open MPI ABI, which is
// what the design names (docs/design.md decision 8).
#include <string>

namespace hr {

class MpiRuntime {
public:
    // dlopen + MPI_Init_thread(MPI_THREAD_SERIALIZED) once per process; MPI_Finalize at exit (MPI_Abort
    // instead when a communicator broke, so the other ranks end too). Throws InputError when the
    // process was not started by mpirun or Open MPI cannot be loaded.
    static MpiRuntime& get();
    int rank() const { return rank_; }
    int size() const { return size_; }
    const std::string& version() const { return version_; }  // "Open MPI v4.1.4"

    // Blocking helpers over MPI_COMM_WORLD for bootstrapping (NCCL's unique id), with a timeout.
    void broadcast_bytes(void* data, std::size_t bytes, int root, double timeout_seconds);
    // MPI_Abort on MPI_COMM_WORLD: ends every rank of the job. Never returns.
    [[noreturn]] void abort_job(int code) noexcept;
    // A communicator broke: at exit, MPI_Abort instead of MPI_Finalize (which would wait for the others).
    void mark_broken() noexcept { broken_ = true; }
    bool broken() const { return broken_; }

    struct Api;
    const Api& api() const { return *api_; }

private:
    MpiRuntime();
    Api* api_ = nullptr;
    int rank_ = 0, size_ = 1;
    std::string version_;
    bool broken_ = false;
};

}  // namespace hr
