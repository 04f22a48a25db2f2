//! tokio-util's `DelayQueue` (tokio's hierarchical timing wheel over a slab)
//! on the pattern of the bench's `scale` scenario, for a side-by-side reading:
//!
//!  (a) `n` live timers an hour out, 1 µs apart: the scheduling rate and the
//!      heap bytes per timer (glibc's mallinfo2, in-use delta, the key vector
//!      reserved before);
//!  (b) insert + remove pairs with deadlines among the live ones';
//!  (c) re-arm a random live timer to now + 60 s with `reset` (which reads the
//!      clock), then the remove + insert form of the same;
//!  (e) remove every live timer, in the order made;
//!  (h) `n` due at one instant, 1.5 s after their scheduling began: from the
//!      deadline to the first expiry and to the last.
//!
//! Rate loops run blocks of 1,024 until 1,000,000 operations or one second,
//! as the bench's do. Prints one line of the bench's JSON names.
use std::time::{Duration, Instant};
use tokio_util::time::{delay_queue::Key, DelayQueue};

#[repr(C)]
struct Mallinfo2 {
    arena: usize, ordblks: usize, smblks: usize, hblks: usize, hblkhd: usize,
    usmblks: usize, fsmblks: usize, uordblks: usize, fordblks: usize, keepcost: usize,
}
extern "C" {
    fn mallinfo2() -> Mallinfo2;
}
fn heap_in_use() -> usize {
    let m = unsafe { mallinfo2() };
    m.uordblks + m.hblkhd
}

/// xorshift64: the picks are drawn before any clock starts.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn per_second(mut body: impl FnMut(usize)) -> f64 {
    let t0 = Instant::now();
    let (mut count, mut t1) = (0, t0);
    while count < 1_000_000 {
        for k in count..count + 1024 {
            body(k)
        }
        count += 1024;
        t1 = Instant::now();
        if t1 - t0 >= Duration::from_secs(1) {
            break;
        }
    }
    count as f64 / (t1 - t0).as_secs_f64()
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(1_000_000, |s| s.parse().expect("a timer count"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async move {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mask = (1 << 20) - 1;
        let picks: Vec<usize> = (0..=mask).map(|_| (rng.next() % n as u64) as usize).collect();

        // (a)
        let mut keys: Vec<Key> = Vec::with_capacity(n);
        let before = heap_in_use();
        let mut queue: DelayQueue<()> = DelayQueue::new();
        let base = Instant::now() + Duration::from_secs(3600);
        let t0 = Instant::now();
        for i in 0..n {
            keys.push(queue.insert_at((), (base + Duration::from_micros(i as u64)).into()));
        }
        let schedule = n as f64 / t0.elapsed().as_secs_f64();
        let bytes = (heap_in_use() - before) as f64 / n as f64;

        // (b)
        let pairs = per_second(|k| {
            let at = base + Duration::from_nanos((k % n) as u64 * 1_000 + 500);
            let key = queue.insert_at((), at.into());
            queue.remove(&key);
        });

        // (c)
        let rearm = per_second(|k| queue.reset(&keys[picks[k & mask]], Duration::from_secs(60)));
        let rearm_new = per_second(|k| {
            let i = picks[k & mask];
            queue.remove(&keys[i]);
            keys[i] = queue.insert((), Duration::from_secs(60));
        });

        // (e)
        let t0 = Instant::now();
        for key in keys.drain(..) {
            queue.remove(&key);
        }
        let cancel_all = t0.elapsed().as_secs_f64() * 1e3;
        drop(queue);

        // (h)
        let mut queue: DelayQueue<()> = DelayQueue::with_capacity(n);
        let t0 = Instant::now();
        let deadline = t0 + Duration::from_millis(1500);
        for _ in 0..n {
            queue.insert_at((), deadline.into());
        }
        let scheduling = t0.elapsed().as_secs_f64() * 1e3;
        let (mut first, mut fired) = (None, 0);
        while fired < n {
            if std::future::poll_fn(|cx| queue.poll_expired(cx)).await.is_none() {
                break;
            }
            fired += 1;
            first.get_or_insert_with(Instant::now);
        }
        let since = |t: Instant| t.duration_since(deadline).as_secs_f64() * 1e3;
        let last = since(Instant::now());
        assert_eq!(fired, n, "every timer expires once");
        println!(
            "tokio DelayQueue, {n} live: schedule_per_s {schedule:.0} bytes_per_timer {bytes:.1} \
             schedule_cancel_per_s {pairs:.0} rearm_per_s {rearm:.0} rearm_cancel_schedule_per_s {rearm_new:.0} \
             cancel_all_ms {cancel_all:.1} fire_ms {last:.1} fire_first_ms {:.3} (scheduling {scheduling:.0} ms)",
            since(first.unwrap())
        );
    });
}
