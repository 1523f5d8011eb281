func.func @f() {
  %x = arith.constant {a = array<index: 1>} 0 : index
  return
}
