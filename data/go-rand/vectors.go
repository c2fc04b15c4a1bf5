// Prints the test vectors of sim_core::rng::go (data/go-rand/vectors.txt):
//   go run vectors.go > vectors.txt      (Go 1.19.8, linux/amd64: Debian golang-1.19)

package main

import (
	"fmt"
	"math/rand"
)

func main() {
	for _, seed := range []int64{0, 1, 42, 233, -1, 2147483647, 2147483648, 1 << 40} {
		r := rand.New(rand.NewSource(seed))
		fmt.Printf("seed=%d Uint64x3=", seed)
		for i := 0; i < 3; i++ {
			fmt.Printf("%d ", r.Uint64())
		}
		r = rand.New(rand.NewSource(seed))
		fmt.Printf("| Int63x3=")
		for i := 0; i < 3; i++ {
			fmt.Printf("%d ", r.Int63())
		}
		fmt.Println()
	}
	for _, seed := range []int64{42, 233} {
		r := rand.New(rand.NewSource(seed))
		fmt.Printf("seed=%d Intn(100)x10=", seed)
		for i := 0; i < 10; i++ {
			fmt.Printf("%d ", r.Intn(100))
		}
		fmt.Println()
		r = rand.New(rand.NewSource(seed))
		fmt.Printf("seed=%d Float64x3=%v %v %v\n", seed, r.Float64(), r.Float64(), r.Float64())
		r = rand.New(rand.NewSource(seed))
		fmt.Printf("seed=%d Perm(10)=%v\n", seed, r.Perm(10))
		r = rand.New(rand.NewSource(seed))
		a := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
		r.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
		fmt.Printf("seed=%d Shuffle(10 of 0..9)=%v\n", seed, a)
		r = rand.New(rand.NewSource(seed))
		fmt.Printf("seed=%d Int()=%d then Intn(8152)x3=%d %d %d\n", seed, r.Int(), r.Intn(8152), r.Intn(8152), r.Intn(8152))
	}
	// global functions, as in the FGD simulator: rand.Seed(42); rand.Int(); rand.Shuffle(...)
	rand.Seed(42)
	x := rand.Int()
	b := make([]int, 20)
	for i := range b { b[i] = i }
	rand.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	fmt.Printf("global: Seed(42); Int()=%d; Shuffle(20)=%v; Intn(1000)=%d; Perm(8)=%v\n", x, b, rand.Intn(1000), rand.Perm(8))
	rand.Seed(1)
	fmt.Printf("global: Seed(1) Intn(100)x9=")
	for i := 0; i < 9; i++ { fmt.Printf("%d ", rand.Intn(100)) }
	fmt.Println()
	// Shuffle with larger n exercising int31n rejection threshold
	r := rand.New(rand.NewSource(7))
	c := make([]int, 1000)
	for i := range c { c[i] = i }
	r.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
	fmt.Printf("seed=7 Shuffle(1000) first10=%v last10=%v next Int63=%d\n", c[:10], c[990:], r.Int63())
}
