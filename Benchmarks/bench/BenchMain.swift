//===----------------------------------------------------------------------===//
// `swift run -c release bench`: the command lives in BenchSupport (so that
// BenchTests can test its parsing and its writers); this only starts it.
//===----------------------------------------------------------------------===//
import BenchSupport

@main
enum BenchMain {
    static func main() async {
        await Bench.main()
    }
}
