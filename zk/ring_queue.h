// lockstep contract: a FIFO queue over a growable circular buffer.
//
// The simulator's message channels and request queues, and the contract's mailboxes, are FIFOs
// that fill and drain all the time (or, for a mailbox, are made per lock grant and mostly stay
// empty). std::deque frees and allocates a block every few elements of such traffic; RingQueue
// keeps its buffer, so once it has grown to the largest backlog, push_back and pop_front never
// allocate, and one never pushed to holds no buffer at all (std::deque allocates two blocks as
// it is made). Elements are stored in order from front() to back(); indexing and iteration go
// front to back. A moved-from queue is empty and has no buffer.
//
// Invariants: capacity is 0 or a power of two; size() <= capacity; the live elements are the
// `size` slots starting at `head`, wrapping around the end of the buffer.
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <new>
#include <utility>

#include "zk/invariant.h"

namespace zk {

template <class T>
class RingQueue {
 public:
  RingQueue() = default;
  ~RingQueue() {
    clear();
    release();
  }
  RingQueue(RingQueue&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        cap_(std::exchange(o.cap_, 0)),
        head_(std::exchange(o.head_, 0)),
        size_(std::exchange(o.size_, 0)) {}
  RingQueue& operator=(RingQueue&& o) noexcept {
    if (this != &o) {
      clear();
      release();
      data_ = std::exchange(o.data_, nullptr);
      cap_ = std::exchange(o.cap_, 0);
      head_ = std::exchange(o.head_, 0);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  RingQueue(const RingQueue&) = delete;
  RingQueue& operator=(const RingQueue&) = delete;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // REQUIRES: i < size().
  T& operator[](size_t i) { return data_[(head_ + i) & (cap_ - 1)]; }
  const T& operator[](size_t i) const { return data_[(head_ + i) & (cap_ - 1)]; }
  // REQUIRES: !empty().
  T& front() { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& front() const { return (*this)[0]; }
  const T& back() const { return (*this)[size_ - 1]; }

  // One move into place (messages are large); `v` may be an element of this queue.
  void push_back(T&& v) {
    if (size_ == cap_) {
      T held(std::move(v));  // grow() moves the elements, `v` among them perhaps
      grow();
      place(std::move(held));
      return;
    }
    place(std::move(v));
  }
  void push_back(const T& v) { push_back(T(v)); }
  // Constructs the new last element in place (a message built where it will wait, not moved
  // there). REQUIRES: no argument refers to an element of this queue (growing moves them).
  template <class... A>
  T& emplace_back(A&&... a) {
    if (size_ == cap_) grow();
    return place(std::forward<A>(a)...);
  }
  // REQUIRES: !empty().
  void pop_front() {
    LOCKSTEP_ASSERT(size_ > 0);
    std::destroy_at(data_ + head_);
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
  }
  // Destroys every element; keeps the buffer.
  void clear() {
    while (size_ > 0) pop_front();
    head_ = 0;
  }

  template <class Q, class V>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;
    Iter(Q* q, size_t i) : q_(q), i_(i) {}
    V& operator*() const { return (*q_)[i_]; }
    V* operator->() const { return &(*q_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }

   private:
    Q* q_;
    size_t i_;
  };
  using iterator = Iter<RingQueue, T>;
  using const_iterator = Iter<const RingQueue, const T>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  // Constructs the element after the last in its slot. REQUIRES: size_ < cap_.
  template <class... A>
  T& place(A&&... a) {
    T* slot = data_ + ((head_ + size_) & (cap_ - 1));
    ::new (static_cast<void*>(slot)) T(std::forward<A>(a)...);
    ++size_;
    return *slot;
  }
  void grow() {
    // From one slot: most queues (a connection's channels, a mailbox) hold one or two at a
    // time, and ten thousand clients' queues of four were a third of their memory.
    const size_t cap = cap_ == 0 ? 1 : cap_ * 2;
    T* data = std::allocator<T>().allocate(cap);
    for (size_t i = 0; i < size_; ++i) {
      T& from = (*this)[i];
      ::new (static_cast<void*>(data + i)) T(std::move(from));
      std::destroy_at(&from);
    }
    release();
    data_ = data;
    cap_ = cap;
    head_ = 0;
  }
  void release() {
    if (data_ != nullptr) std::allocator<T>().deallocate(data_, cap_);
    data_ = nullptr;
    cap_ = 0;
  }

  T* data_ = nullptr;
  size_t cap_ = 0;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace zk
