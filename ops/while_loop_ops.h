#pragma once

// TF1's while loops (control flow v1: tf.compat.v1.while_loop in a graph
// built with disable_control_flow_v2 or disable_v2_behavior) in a Session.
//
//   Enter / RefEnter                  a value entering a loop's frame (frame_name;
//                                     is_constant: a loop invariant)
//   Merge(Enter, NextIteration)       a loop variable at the start of an iteration
//   LoopCond                          the loop's predicate
//   Switch(Merge, LoopCond)           :1 into the body, :0 to the Exit
//   NextIteration / RefNextIteration  the variable's value for the next iteration
//   Exit / RefExit                    its value after the last iteration
//
// A Session runs each loop as one step of its plan, at the loop's first
// Exit (ops/internal/loop_frames.h says how and why): the loop's frame runs
// as a body graph of its own, cond then body, until LoopCond's input is
// false, as TF's executor computes it with parallel_iterations = 1 (the
// values do not depend on it). Nested loops, loop invariants, tf.cond
// inside a body, a loop inside a tf.cond branch (the loop is dead with its
// branch) and variables read and assigned in a body run; a RefEnter of a
// variable passes the variable itself, so the body reads it as it is at
// each read and its Assigns reach it.
//
// Errors: malformed frames are InvalidArgumentError naming a node when a
// plan is built (loop_frames.h lists them); LoopCond's input must be a bool
// scalar (InvalidArgumentError naming the loop); a loop that runs more
// iterations than SessionOptions::max_loop_iterations throws
// ResourceExhaustedError naming the loop's frame and its LoopCond, and one
// still running past SessionOptions::operation_timeout_in_ms throws
// DeadlineExceededError naming them likewise; an error in the body keeps
// its kind and names the body node and the loop.
// A node of a frame fetched on its own (not through its Exit) throws
// InvalidArgumentError naming it.
//
// Only the Session runs these node types; the OpDefs of the frame's own
// types (Enter, Exit, NextIteration, LoopCond, ...) exist so that a plan
// finds them and so that a node of them reached outside a loop throws
// naming it.

namespace eager {

struct OpDef;

extern const OpDef kEnterOp;             // "Enter"
extern const OpDef kRefEnterOp;          // "RefEnter"
extern const OpDef kExitOp;              // "Exit"
extern const OpDef kRefExitOp;           // "RefExit"
extern const OpDef kNextIterationOp;     // "NextIteration"
extern const OpDef kRefNextIterationOp;  // "RefNextIteration"
extern const OpDef kLoopCondOp;          // "LoopCond"
extern const OpDef kRefMergeOp;          // "RefMerge": Merge of references, run as Merge
// The Session's own steps (loop_frames.h): a whole loop, and a frame's
// node reached from outside its loop.
extern const OpDef kWhileLoopStepOp;  // "_EagerWhileLoop"
extern const OpDef kInFrameStepOp;    // "_EagerInFrame"

}  // namespace eager
