#pragma once

// CheckpointOptions: how Checkpoint::Save/Write and CheckpointManager::Save
// write, tf.train.CheckpointOptions.
//
//   eager::CheckpointOptions options{.async = true};   // TF's enable_async
//   for (int step = 0; ...; ++step) {
//     TrainStep();
//     if (step % 1000 == 0) manager.Save(std::nullopt, true, options);
//   }
//   checkpoint.Sync();   // the last save is on disk (or its error is thrown)
//
// async: the values are captured when Save() returns, and the files are
// written on a background thread running at nice 19. Save() itself copies
// the values their variables hold, up to 64 MiB a save, on the calling
// thread, with stores that bypass the caches (saving/checkpoint/internal/own_copies.h;
// ~0.2 ms for the main job's 2.4 MB here), as TF's async checkpoint
// snapshots before it returns. Why the caller: the optimizer has just written
// those values, so they sit modified in the training core's cache; a writer
// thread reading them there leaves them shared, and the next step's in-place
// update pays to take them back (the step during a save: 1.11x a normal step
// with the writer's copy, 1.06x with the caller's, benchmarks/README.md).
// Values beyond the budget stay held by the save (Tensors are immutable;
// optimizers write a step into a new buffer instead of updating in place
// while a save holds the value, autodiff/internal/writable_value.h);
// unsharded, the writer lets go of each as soon as its bytes are written.
// The copies are freed by the next call that waits for the save (below),
// into the calling thread's buffer cache, where the next save's copies come
// from. Only one save per Checkpoint is in flight: the next
// Save/Write/Restore/Read, Sync() or the destructor first waits for it. An
// error of a background save is thrown by the next of those calls (or by
// Sync()), as the error kind the save raised, its message starting with
// "Asynchronous save of <prefix> failed: ". A destructor cannot throw: it
// prints such an error to stderr.
//
// num_shards: the tensor bytes are spread over this many data files
// (PREFIX.data-0000k-of-0000N, one merged PREFIX.index, FORMAT.md 2.1), each
// written by its own thread, as TF's sharded savers lay them out. See
// BundleWriterOptions (saving/bundle/bundle_writer.h) for the layout and the extra
// empty shard an overwrite may add.
//
// distributed: every process of a job (the members of CurrentSaveGroup(),
// saving/bundle/save_group.h: an eager::distributed::World under mpirun)
// saves the same objects together, each writing its balanced-by-bytes share
// of the values to its own PREFIX.data-0000r-of-0000N; rank 0 writes the one
// merged index once every share is durable, then the state file, and
// commits by rename (BundleWriter's distributed mode, bundle_writer.h). Every
// rank calls Save/Write with the same prefix at the same point, holding the
// same values (data parallelism keeps replicas equal); each returns the same
// path, or throws the same error when any rank failed. The optimizer slots
// are not sharded (every rank holds and saves its share of all state).
// Restoring needs nothing special: any number of processes, or one, restore
// the bundle with Checkpoint::Restore. Without a group of more than one
// process this is an ordinary save; num_shards must stay 1 and async false.

namespace eager {

struct CheckpointOptions {
  // Write in the background (see above).
  bool async = false;
  // Data files to spread the bytes over; 1 <= num_shards <= 1024.
  int num_shards = 1;
  // Every process of the job writes its share (see above).
  bool distributed = false;
};

}  // namespace eager
