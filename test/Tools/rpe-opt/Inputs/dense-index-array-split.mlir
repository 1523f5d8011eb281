// A string that spells array<index and a commented-out one are left alone;
// the array whose brackets hold a comment and a line break is not.
func.func @f() {
  %x = arith.constant {a = array< // comment
      index: 1>, s = "array<index"} 0 : index
  // array<index: 2>
  return
}
