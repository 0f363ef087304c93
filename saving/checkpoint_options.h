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
// async: the values are captured when Save() returns (Tensors are immutable
// and optimizers write a step into a new buffer instead of updating in place
// while a save holds the value, autodiff/internal/writable_value.h), and the
// files are written on a background thread running at nice 19. Before any
// file work, that thread copies the values their variables still hold (up to
// 64 MiB a save, saving/internal/own_copies.h) and lets go of them, so the
// optimizer updates them in place again (a copy of the caller's takes
// ~0.2 ms of Save() for the main job's 2.4 MB and was measured not to make
// the step during the save faster, benchmarks/README.md). Values beyond that
// stay held until written (unsharded) or until the next call that waits for
// the save (below). Only one save per Checkpoint is in flight: the next
// Save/Write/Restore/Read, Sync() or the destructor first waits for it. An
// error of a background save is thrown by the next of those calls (or by
// Sync()), as the error kind the save raised, its message starting with
// "Asynchronous save of <prefix> failed: ". A destructor cannot throw: it
// prints such an error to stderr.
//
// num_shards: the tensor bytes are spread over this many data files
// (PREFIX.data-0000k-of-0000N, one merged PREFIX.index, FORMAT.md 2.1), each
// written by its own thread, as TF's sharded savers lay them out. See
// BundleWriterOptions (saving/bundle_writer.h) for the layout and the extra
// empty shard an overwrite may add.

namespace eager {

struct CheckpointOptions {
  // Write in the background (see above).
  bool async = false;
  // Data files to spread the bytes over; 1 <= num_shards <= 1024.
  int num_shards = 1;
};

}  // namespace eager
