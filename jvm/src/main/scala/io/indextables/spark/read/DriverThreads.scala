package io.indextables.spark.read

import java.util.concurrent.{ConcurrentLinkedQueue, Executors}

import scala.collection.JavaConverters._
import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration

/**
 * Work the driver spreads over a few threads of a pool made for the call: the splits a
 * driver-answered search or aggregation reads, and the splits a ranked search scores. The
 * first failure fails the call.
 */
private[read] object DriverThreads {

  /** `f` run by `n` workers at once (on this thread when `n` is 1), their results in order. */
  def workers[B](n: Int)(f: => B): Seq[B] =
    if (n <= 1) Seq(f)
    else {
      val pool = Executors.newFixedThreadPool(n)
      implicit val ec: ExecutionContext = ExecutionContext.fromExecutorService(pool)
      try Await.result(Future.sequence((1 to n).map(_ => Future(f))), Duration.Inf)
      finally pool.shutdown()
    }

  /** `f` of every item, on up to `threads` threads, each taking the next item; in items' order. */
  def map[A, B](items: Seq[A], threads: Int)(f: A => B): Seq[B] = {
    val indexed = items.toIndexedSeq
    val out = new Array[Any](indexed.size)
    val unread = new ConcurrentLinkedQueue[Integer]((0 until indexed.size).map(Int.box).asJava)
    workers(math.max(1, math.min(threads, indexed.size))) {
      var i = unread.poll()
      while (i != null) {
        out(i) = f(indexed(i))
        i = unread.poll()
      }
    }
    out.toSeq.asInstanceOf[Seq[B]]
  }
}
