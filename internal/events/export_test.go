package events

// Queued is how many live events wait in s's queue.
func Queued(s *Subscription) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}
