// Random-legal self-play on the Hanabi Learning Environment's own C++ core.
//
// The reference point for lbs_pz's batched random play (lbs_pz/bench/engine_throughput.py
// builds this file against HLE 0.0.4's hanabi_lib/*.cc and runs it). It is our code,
// not HLE's: per game it creates a HanabiState of a default 2-player HanabiGame, deals
// with ApplyRandomChance() whenever the chance player is to act, and otherwise applies a
// uniformly random move from LegalMoves(CurPlayer()), until IsTerminal(). Only player
// moves are counted (deals are not), as in lbs_pz's play_random().
//
// Usage: hle_random_play GAMES [REPEATS [SEED]]
// Prints one line per timed repeat: "moves=M games=G seconds=S moves_per_s=R".
// One untimed warm-up pass of GAMES/10 games comes first.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "hanabi_game.h"
#include "hanabi_move.h"
#include "hanabi_state.h"

namespace hle = hanabi_learning_env;

static long PlayGames(hle::HanabiGame* game, long games, std::mt19937* rng) {
  long moves = 0;
  for (long g = 0; g < games; ++g) {
    hle::HanabiState state(game);
    while (!state.IsTerminal()) {
      if (state.CurPlayer() == hle::kChancePlayerId) {
        state.ApplyRandomChance();
        continue;
      }
      std::vector<hle::HanabiMove> legal = state.LegalMoves(state.CurPlayer());
      std::uniform_int_distribution<int> pick(0, static_cast<int>(legal.size()) - 1);
      state.ApplyMove(legal[pick(*rng)]);
      ++moves;
    }
  }
  return moves;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s GAMES [REPEATS [SEED]]\n", argv[0]);
    return 2;
  }
  long games = std::atol(argv[1]);
  int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  unsigned seed = argc > 3 ? static_cast<unsigned>(std::atol(argv[3])) : 12345u;
  if (games < 1 || repeats < 1) {
    std::fprintf(stderr, "GAMES and REPEATS must be >= 1\n");
    return 2;
  }

  std::unordered_map<std::string, std::string> params = {
      {"players", "2"}, {"seed", std::to_string(seed)}};
  hle::HanabiGame game(params);
  std::mt19937 rng(seed);

  PlayGames(&game, games / 10 + 1, &rng);  // warm-up
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    long moves = PlayGames(&game, games, &rng);
    auto t1 = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(t1 - t0).count();
    std::printf("moves=%ld games=%ld seconds=%.6f moves_per_s=%.1f\n", moves, games, secs,
                moves / secs);
  }
  return 0;
}
