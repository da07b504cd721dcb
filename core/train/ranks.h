#pragma once
// Several ranks (docs/distributed.md), as the training loop uses them: which device and how many threads a
// rank takes, the run's communicator (kept for abort_ranks), stop and pause agreed by every rank, and each
// rank's share of an evaluation.
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

namespace hr {

struct RankEnvironment;
class Backend;
class Communicator;
class TrainingState;

// The world size of this process's run: mpirun's, else 1.
int world_size_of_run();
// The device of this rank: `cuda` (or `auto` on a GPU machine, when that GPU passes the self-test) is
// cuda:LOCAL_RANK, or cuda:0 when the launcher made one GPU visible to each rank; `cuda:0,2` this local
// rank's entry; one process: the flag as it is. InputError when a list is shorter than the local ranks or
// more ranks run here than there are GPUs. `visible_gpus` < 0: cuda_device_count().
std::string rank_device(const std::string& device, const RankEnvironment& env, int visible_gpus = -1);
// Ends every rank of the run now (MPI_Abort), after this rank has said and recorded why: for the app,
// once a multi-rank run failed. Does nothing for one process. Never returns when it aborts.
void abort_ranks(const std::string& reason) noexcept;

// The compute threads of this rank: CPU ranks share the machine's cores, so --threads 0 means cores / ranks
// on this machine; otherwise the flag as it is.
int rank_threads(int threads, int world, const std::string& device, const RankEnvironment& env);
// The run's communicator on `be` (dist/communicator.h), remembered for abort_ranks().
std::shared_ptr<Communicator> run_communicator(Backend& be, double timeout_seconds);
// Stop and pause are decided by every rank alike: the largest request of any rank, once per step (a
// paused run polls ten times a second, every rank together). Throws Cancelled when any rank stops.
void agree_on_control(Communicator& comm, const std::atomic<bool>& stop, const std::atomic<bool>& paused);
// Evaluation on several ranks: rank `rank`'s part [first, + count) of `rows` rows (count may be 0).
std::pair<std::int64_t, std::int64_t> rank_share(std::int64_t rows, int rank, int world);
// How the ranks agree on a run's figures (a step's loss and correct rows, an evaluation's sums): each of
// `figures` becomes the sum over the run's ranks of the ranks that count it, the same on every rank.
// Pipeline stages: the last stage's (K x T: its first head part's; the others computed the same); data
// replicas: every replica's (T x D: each replica's first head part's). One process (`comm` null), or ranks
// that all hold the same figures (a split head alone): left as they are.
void agree_on_figures(Communicator* comm, const TrainingState& st, std::initializer_list<double*> figures);

}  // namespace hr
