#pragma once
// A sweep on a Slurm cluster: one job array whose tasks each run a chunk of the points with
// the same point runner as a local sweep, and a merge of their results into the database.
//
//   DIR/slurm/points.json       the pending points (index, key, parameters, arguments), the
//                               chunk size and the per-point timeout
//   DIR/slurm/job.sh            the batch script (#SBATCH --array=0-<tasks-1>), submitted with sbatch
//   DIR/slurm/logs/task-<i>.out each task's own log
//   DIR/slurm/results/task-<i>.jsonl   one line per finished point: key, index, parameters,
//                               arguments and its outcome, flushed as each point ends
//
// A task runs `<program> sweep --task DIR --index $SLURM_ARRAY_TASK_ID`; `sohusim sweep --merge
// DIR` reads every task's lines into DIR/results.sqlite. The points are the ones a local run
// would run, so merged results equal a local run's (wall times aside). Slurm schedules; this
// only describes the work to it.
#include <string>
#include <vector>

#include "sohusim/studies/result_store.hpp"
#include "sohusim/studies/sweep_spec.hpp"

namespace sohusim::studies {

struct SlurmOptions {
  std::string partition;          // "" = the cluster's default
  std::string time_limit;         // per task, Slurm's syntax ("30", "1:00:00"); "" = the partition's
  unsigned chunk = 1;             // points per task
  bool wait = false;              // sbatch --wait: return when every task has ended
  std::string sbatch = "sbatch";  // the submit command
};

/// Writes points.json and job.sh and submits the array. Returns sbatch's job id. Throws
/// std::runtime_error with sbatch's message when the submission fails.
std::string submit_array(const SweepSpec& spec, const std::vector<SweepPoint>& pending, const std::string& dir,
                         const std::string& program, const SlurmOptions& options);

/// The task side: runs chunk `index` of DIR/slurm/points.json, one point at a time, each line
/// of results flushed as it ends. Returns the number of points that were not ok.
unsigned run_array_task(const std::string& dir, unsigned index, const std::string& program);

/// Reads every DIR/slurm/results/*.jsonl into `store`; returns the points merged. A line that
/// cannot be read (a task killed while writing it) is skipped and counted in `skipped`.
unsigned merge_results(const std::string& dir, ResultStore& store, unsigned* skipped = nullptr);

}  // namespace sohusim::studies
