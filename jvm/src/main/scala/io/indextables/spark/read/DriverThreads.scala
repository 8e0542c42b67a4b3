package io.indextables.spark.read

import java.util.concurrent.{ConcurrentLinkedQueue, Executors}

import scala.jdk.CollectionConverters._
import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration

import org.apache.spark.sql.SparkSession

/**
 * Work the driver spreads over a few threads: the splits a driver-answered search or
 * aggregation reads, and the splits a ranked search scores. The calling thread is one of the
 * workers; the others come from one pool of daemon threads per JVM, which keeps idle threads
 * for a while and makes new ones when all are busy (so a worker that itself spreads work never
 * waits for a thread). Making a pool per call cost milliseconds a call, which an interactive
 * search, making several calls, felt. The first failure fails the call.
 */
private[read] object DriverThreads {

  private lazy val context: ExecutionContext = {
    val count = new java.util.concurrent.atomic.AtomicInteger()
    val pool = Executors.newCachedThreadPool { (r: Runnable) =>
      val t = new Thread(r, s"indextables-driver-${count.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
    ExecutionContext.fromExecutorService(pool)
  }

  /** `f` run by `n` workers at once (on this thread when `n` is 1), their results in order. */
  def workers[B](n: Int)(f: => B): Seq[B] =
    if (n <= 1) Seq(f)
    else {
      implicit val ec: ExecutionContext = context
      // The caller's session is the workers' too (a pooled thread holds no session of its own).
      val session = SparkSession.getActiveSession
      val others = (2 to n).map { _ =>
        Future {
          session.foreach(SparkSession.setActiveSession)
          try f
          finally SparkSession.clearActiveSession()
        }
      }
      // This thread works too; the call fails with the first failure, after every worker ends
      // (so none still runs `f` once the call has returned).
      val mine = scala.util.Try(f)
      val theirs = others.map(w => scala.util.Try(Await.result(w, Duration.Inf)))
      (mine +: theirs).map(_.get)
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
