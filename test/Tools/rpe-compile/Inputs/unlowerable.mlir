// gpu.thread_id has no CPU lowering.
func.func @f() -> index {
  %0 = gpu.thread_id x
  return %0 : index
}
func.func @vec(%v: vector<4xf32>) -> vector<4xf32> {
  return %v : vector<4xf32>
}
