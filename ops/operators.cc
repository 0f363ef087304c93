// TODO(ops): implemented by the ops work.
